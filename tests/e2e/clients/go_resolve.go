// Resolves each name given with Go's own resolver (not the C library's),
// asking the server given first over UDP, and prints "name addr,addr" or
// "name error".
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
)

func main() {
	server := os.Args[1]
	r := &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "udp", server)
		},
	}
	for _, name := range os.Args[2:] {
		addrs, err := r.LookupIPAddr(context.Background(), name)
		if err != nil {
			fmt.Println(name, "error")
			continue
		}
		var s []string
		for _, a := range addrs {
			s = append(s, a.IP.String())
		}
		fmt.Println(name, strings.Join(s, ","))
	}
}
