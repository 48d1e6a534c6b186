// A short-lived Go HTTPS client for the e2e tests: one GET, the status on stdout, exit.
// With a second argument "linger" it exits only at the end of its stdin, so a test can
// keep it alive until the agent has reported it.
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
	if len(os.Args) > 2 && os.Args[2] == "linger" {
		io.Copy(io.Discard, os.Stdin)
	}
}
