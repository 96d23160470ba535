package enginehttp

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"
)

type seen struct {
	method, path, auth, accept, ua, ctype, body string
}

func server(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) (string, <-chan seen) {
	t.Helper()
	got := make(chan seen, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Accept"),
			r.Header.Get("User-Agent"), r.Header.Get("Content-Type"), string(b)}
		if answer != nil {
			answer(w, r)
			return
		}
		io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, got
}

func TestCredentials(t *testing.T) {
	base, got := server(t, nil)
	withUser := strings.Replace(base, "http://", "http://ann:s%40cret@", 1)
	for _, tc := range []struct {
		name, url string
		auth      Auth
		want      string
	}{
		{"none", base, Auth{}, ""},
		{"bearer", base, Auth{Key: "sk-1"}, "Bearer sk-1"},
		{"user info of the auth", base, Auth{User: url.UserPassword("bob", "pw")}, Basic("bob", "pw")},
		{"user info in the URL", withUser, Auth{}, Basic("ann", "s@cret")},
		{"the key wins", withUser, Auth{Key: "sk-2"}, "Bearer sk-2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := Do(context.Background(), nil, Request{URL: Join(tc.url, "/v1/models"), Auth: tc.auth})
			if err != nil {
				t.Fatal(err)
			}
			s := <-got
			if s.auth != tc.want || s.path != "/v1/models" || s.method != http.MethodGet ||
				s.accept != "application/json" || s.ua != "kvbench" || s.ctype != "" {
				t.Errorf("server saw %+v, want Authorization %q on GET /v1/models", s, tc.want)
			}
			if resp.Status != 200 || string(resp.Body) != `{"ok":true}` {
				t.Errorf("answer %d %q", resp.Status, resp.Body)
			}
		})
	}
	if h := (Auth{User: url.User("ann")}).Header(); h != Basic("ann", "") || Basic("ann", "") != "Basic YW5uOg==" {
		t.Errorf("user without password: %q", h)
	}
}

func TestPostAcceptAndStatus(t *testing.T) {
	base, got := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, "short")
	})
	resp, err := Do(context.Background(), nil, Request{Method: http.MethodPost, URL: Join(base+"/", "tokenize"),
		Body: []byte(`{"a":1}`), Accept: "text/plain"})
	if err != nil {
		t.Fatal(err)
	}
	s := <-got
	if s.method != http.MethodPost || s.path != "/tokenize" || s.ctype != "application/json" || s.body != `{"a":1}` || s.accept != "text/plain" {
		t.Errorf("server saw %+v", s)
	}
	if resp.Status != http.StatusTeapot || string(resp.Body) != "short" {
		t.Errorf("a status other than 200 is an answer: %d %q", resp.Status, resp.Body)
	}
}

func TestJoin(t *testing.T) {
	for in, want := range map[[2]string]string{
		{"http://h:1/v1", "/models"}:  "http://h:1/v1/models",
		{"http://h:1/v1/", "models"}:  "http://h:1/v1/models",
		{"h:1//", "/status"}:          "http://h:1/status",
		{"https://h", ""}:             "https://h",
		{"http://u:p@h/v1", "models"}: "http://u:p@h/v1/models",
	} {
		if got := Join(in[0], in[1]); got != want {
			t.Errorf("Join(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
}

// An answer longer than Max is an error naming the URL, never its
// credentials; one of exactly Max bytes is whole.
func TestBoundedAnswer(t *testing.T) {
	base, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("x", 2048))
	})
	u := strings.Replace(base, "http://", "http://ann:hunter2@", 1) + "/metrics"
	if resp, err := Do(context.Background(), nil, Request{URL: u, Max: 2048}); err != nil || len(resp.Body) != 2048 {
		t.Fatalf("an answer of Max bytes: %v", err)
	}
	_, err := Do(context.Background(), nil, Request{URL: u, Max: 1024})
	var e *Error
	if !errors.Is(err, ErrTooLarge) || !errors.As(err, &e) || !e.Reading {
		t.Fatalf("over Max: %v, want ErrTooLarge in an *Error", err)
	}
	want := "GET " + base + "/metrics: reading the answer: answer too large: over 1 KiB"
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

// No answer: the error names the URL without credentials, is one line,
// and keeps the transport's cause for callers that classify it.
func TestNoAnswer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = Do(context.Background(), nil, Request{URL: "http://ann:hunter2@" + addr + "/v1/models", Auth: Auth{Key: "sk-secret"}})
	if err == nil {
		t.Fatal("a closed port answered")
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("%v: the cause is lost", err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "GET http://"+addr+"/v1/models: ") || strings.Contains(msg, "hunter2") || strings.Contains(msg, "ann") ||
		strings.Contains(msg, "sk-secret") || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want the method and the credential-free URL on one line", msg)
	}

	// A server that never answers: Timeout ends the wait.
	release := make(chan struct{})
	base, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	_, err = Do(context.Background(), nil, Request{URL: base, Timeout: 50 * time.Millisecond})
	var ne net.Error
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("no answer within the timeout: %v, want a timeout", err)
	}
}
