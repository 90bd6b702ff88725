// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// Go net/http: a GET and a POST of "OK <workload> <mode>" to the sink ($COMPAT_SINK) through
// the default client (the runtime's netpoller: epoll, an eventfd or pipe, TCP keepalive on
// every dial), with goroutines around it, and os/user for the agent's own entry. Exit 0
// reported, 3 refused with EPERM/EACCES, 1 anything else.
package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/user"
	"strings"
	"sync"
	"syscall"
)

var id = os.Getenv("COMPAT_ID")

func fail(msg string) {
	fmt.Fprintf(os.Stderr, "compat %s: FAIL %s\n", id, msg)
	os.Exit(1)
}

func refused(err error) {
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
		fmt.Printf("compat %s: denied: %v\n", id, err)
		os.Exit(3)
	}
	fail("report: " + err.Error())
}

func main() {
	sink := os.Getenv("COMPAT_SINK")
	var wg sync.WaitGroup
	sums := make([]int, 4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				sums[g] += i
			}
		}(g)
	}
	wg.Wait()
	if sums[3] != 499500 {
		fail("goroutines")
	}
	u, err := user.Current()
	if err != nil {
		fail("user.Current: " + err.Error())
	}
	r, err := http.Get(sink)
	if err != nil {
		refused(err)
	}
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if string(b) != "pong\n" {
		fail("GET: " + string(b))
	}
	r, err = http.Post(sink, "text/plain", strings.NewReader("OK "+id+" "+u.Username))
	if err != nil {
		refused(err)
	}
	io.Copy(io.Discard, r.Body)
	r.Body.Close()
	if r.StatusCode != 200 {
		fail(fmt.Sprintf("POST: %d", r.StatusCode))
	}
	fmt.Printf("compat %s: reported\n", id)
}
