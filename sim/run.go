package sim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// shutdownGrace is how long Close lets in-flight requests finish before it
// cuts them off (a variable for tests).
var shutdownGrace = 3 * time.Second

// Running is a simulator listening on a socket.
type Running struct {
	Server *Server
	srv    *http.Server
	ln     net.Listener
	cancel context.CancelFunc
	served chan error
}

// Start validates cfg and serves it on cfg.Listen ("127.0.0.1:0" picks a
// free port) until Close.
func Start(cfg Config) (*Running, error) {
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("sim: listen on %s: %w", cfg.Listen, err)
	}
	if cfg.fixedMode() {
		ln = stampListen(ln) // TTFT from the kernel's receive time
	}
	base, cancel := context.WithCancel(context.Background())
	r := &Running{
		Server: s,
		ln:     ln,
		cancel: cancel,
		served: make(chan error, 1),
		srv: &http.Server{
			Handler:           s,
			ReadHeaderTimeout: 10 * time.Second,
			BaseContext:       func(net.Listener) context.Context { return base },
			ConnContext:       withConn,
		},
	}
	go func() { r.served <- r.srv.Serve(ln) }()
	return r, nil
}

// URL is the base URL clients use, e.g. "http://127.0.0.1:8000". A
// wildcard listen address is reached through loopback.
func (r *Running) URL() string {
	addr := r.ln.Addr().(*net.TCPAddr)
	ip := addr.IP
	if ip == nil || ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
		if addr.IP != nil && addr.IP.To4() == nil {
			ip = net.IPv6loopback
		}
	}
	return "http://" + net.JoinHostPort(ip.String(), strconv.Itoa(addr.Port))
}

// Close stops accepting, lets in-flight requests finish for a few seconds,
// then cuts off the rest. It is safe to call more than once.
func (r *Running) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err := r.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		r.cancel() // ends every request's context, so handlers return
		err = r.srv.Close()
	}
	r.cancel()
	if serr := <-r.served; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	r.served <- http.ErrServerClosed // for a second Close
	return err
}

// NewCommand is `kvbench sim`: the simulator in the foreground until
// SIGINT or SIGTERM. An invalid flag value is returned as an error (the
// caller exits 2).
func NewCommand() *cobra.Command {
	cfg := DefaultConfig()
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Run the built-in simulated inference engine",
		Long: "Run the built-in simulated engine: an OpenAI-compatible server that models a\n" +
			"vLLM-style prefix cache with an optional CPU tier, batching and decoding, with\n" +
			"exact token accounting, vLLM metrics, an LMCache-style /status and faults.",
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.Validate(); err != nil {
				return err
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			r, err := Start(cfg)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "kvbench sim listening on %s\n", r.URL())
			fmt.Fprintf(cmd.ErrOrStderr(), "model %s, GPU tier %d tokens, CPU tier %d tokens, block %d, tokens per GB %d\n",
				cfg.Model, cfg.gpuBlocks()*cfg.BlockSize, cfg.cpuBlocks()*cfg.BlockSize, cfg.BlockSize, cfg.TokensPerGB)
			<-ctx.Done()
			if err := r.Close(); err != nil {
				return fmt.Errorf("sim: shut down: %w", err)
			}
			return nil
		},
	}
	cfg.RegisterFlags(cmd.Flags())
	return cmd
}
