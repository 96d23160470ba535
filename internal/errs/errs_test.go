package errs

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"testing"
)

func TestRoot(t *testing.T) {
	refused := &url.Error{Op: "Get", URL: "http://127.0.0.1:1/v1/models", Err: &net.OpError{
		Op: "dial", Net: "tcp", Err: fmt.Errorf("connect: %w", syscall.ECONNREFUSED),
	}}
	if got := Root(refused); got != syscall.ECONNREFUSED {
		t.Errorf("Root = %v (%T), want the errno", got, got)
	}
	plain := errors.New("plain")
	if got := Root(plain); got != plain {
		t.Errorf("Root(plain) = %v", got)
	}
	if got := Root(nil); got != nil {
		t.Errorf("Root(nil) = %v", got)
	}
}
