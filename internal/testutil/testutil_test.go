package testutil

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

// A closed address refuses connections and, where the port can be
// reserved, no server started after it can take its port.
func TestClosedAddrStaysClosed(t *testing.T) {
	addr := ClosedAddr(t)
	if reserves {
		if ln, err := net.Listen("tcp", addr); err == nil {
			ln.Close()
			t.Fatalf("a server could listen on the closed address %s", addr)
		}
	}
	_, err := net.Dial("tcp", addr)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial %s: %v, want connection refused", addr, err)
	}
}
