// A Go HTTPS server for the e2e tests: /ok answers 200, anything else 404.
// Usage: go_serve ADDR CERT KEY; prints "listening" once it accepts connections.
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
)

func main() {
	ln, err := net.Listen("tcp", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	fmt.Println("listening")
	os.Stdout.Sync()
	err = http.ServeTLS(ln, mux, os.Args[2], os.Args[3])
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
