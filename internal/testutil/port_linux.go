package testutil

import (
	"net"
	"strconv"
	"syscall"
	"testing"
)

// reservedPort binds a loopback TCP socket to a free port without
// listening on it, until the test ends: Linux refuses connections to it
// and hands the port to no other socket.
func reservedPort(t testing.TB) (string, bool) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return "", false
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		syscall.Close(fd)
		return "", false
	}
	sa, err := syscall.Getsockname(fd)
	in, ok := sa.(*syscall.SockaddrInet4)
	if err != nil || !ok {
		syscall.Close(fd)
		return "", false
	}
	t.Cleanup(func() { syscall.Close(fd) })
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(in.Port)), true
}
