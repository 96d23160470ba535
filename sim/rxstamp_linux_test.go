package sim

import (
	"net"
	"testing"
	"time"
)

// A stamped connection keeps the kernel's receive time of each request's
// first bytes, not the time they were read: bytes that waited 300 ms in
// the socket read as received 300 ms ago. The reads after it (a body)
// keep that stamp; the first read after a write (the response) starts
// the next request's.
func TestStampConnKeepsTheReceiveTime(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := stampListen(raw)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	client, err := net.DialTimeout("tcp", raw.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	defer server.Close()
	server.SetDeadline(time.Now().Add(10 * time.Second))
	sc, ok := server.(arrivalConn)
	if !ok {
		t.Fatalf("accepted %T, want a stamping connection", server)
	}

	// Linux turns receive timestamps on for the machine a little after the
	// first socket asks (a deferred static key): until then reads carry
	// none, and a request counts from its handler. Wait for them.
	buf := make([]byte, 64)
	for i := 0; ; i++ {
		client.Write([]byte("w"))
		server.Read(buf)
		if !sc.requestArrival().IsZero() {
			break
		}
		if i == 200 {
			t.Fatal("no receive timestamp after 200 reads")
		}
		server.Write([]byte("x")) // the next read starts a request
		client.Read(buf)
		time.Sleep(10 * time.Millisecond)
	}
	server.Write([]byte("x"))
	client.Read(buf)

	const wait = 300 * time.Millisecond
	sent := time.Now()
	client.Write([]byte("first"))
	time.Sleep(wait)
	if n, err := server.Read(buf); err != nil || string(buf[:n]) != "first" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	read := time.Now()
	at := sc.requestArrival()
	if at.Before(sent.Add(-time.Second)) || at.After(read.Add(-wait/2)) {
		t.Fatalf("receive time %v after the send, read %v after it: want the receive time near the send",
			at.Sub(sent), read.Sub(sent))
	}

	client.Write([]byte("body"))
	if n, err := server.Read(buf); err != nil || string(buf[:n]) != "body" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	if got := sc.requestArrival(); !got.Equal(at) {
		t.Fatalf("a read before any write moved the stamp by %v", got.Sub(at))
	}

	server.Write([]byte("reply"))
	client.Read(buf)
	time.Sleep(10 * time.Millisecond)
	next := time.Now()
	client.Write([]byte("second"))
	if n, err := server.Read(buf); err != nil || string(buf[:n]) != "second" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	if got := sc.requestArrival(); got.Before(next.Add(-time.Millisecond)) {
		t.Fatalf("the next request's stamp is %v before its send", next.Sub(got))
	}

	client.Close()
	if n, err := server.Read(buf); n != 0 || err == nil {
		t.Fatalf("read after the peer closed: %d, %v; want 0 and EOF", n, err)
	}
}
