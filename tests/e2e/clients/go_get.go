// A short-lived Go HTTPS client for the e2e tests: one GET, the status on stdout, exit.
// Standard library only; crypto/tls is linked into the binary, as in every Go program.
package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
)

func main() {
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	r, err := (&http.Client{Transport: tr}).Get(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	io.Copy(io.Discard, r.Body)
	r.Body.Close()
	fmt.Println(r.StatusCode)
}
