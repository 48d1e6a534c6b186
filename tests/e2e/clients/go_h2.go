// A Go HTTP/2 client for the e2e tests: GETs over one TLS connection, h2 chosen by ALPN.
// Usage: go_h2 BASE OK MISSING: OK GETs of BASE/ok, then MISSING GETs of BASE/missing.
// Prints the protocol and how many answers each status class had, as JSON:
// {"proto":"HTTP/2.0","2xx":20,"4xx":5}. Standard library only: Go 1.19's net/http speaks
// HTTP/2 inside TLS only (h2c is in golang.org/x/net, not the standard library).
package main

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: go_h2 BASE OK MISSING")
		os.Exit(2)
	}
	// A Transport with its own TLS config needs ForceAttemptHTTP2 to offer h2.
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true}
	c := &http.Client{Transport: tr}
	out := map[string]interface{}{}
	for i, path := range []string{"/ok", "/missing"} {
		n, _ := strconv.Atoi(os.Args[2+i])
		for j := 0; j < n; j++ {
			r, err := c.Get(os.Args[1] + path)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
			out["proto"] = r.Proto
			class := fmt.Sprintf("%dxx", r.StatusCode/100)
			k, _ := out[class].(int)
			out[class] = k + 1
		}
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
