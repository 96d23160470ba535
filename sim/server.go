package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/kvbench/kvbench/sim/kvcache"
)

// Server is the simulated engine as an http.Handler. Create it with New.
type Server struct {
	cfg     Config
	clock   clock
	cache   *kvcache.Cache
	sched   *scheduler
	dice    *dice
	metrics *metrics
	vocab   pieceTable    // the text of ids /tokenize produced, for /detokenize
	seq     atomic.Uint64 // response ids
	started time.Time

	// trace, when set (tests), is called once per admitted request just
	// before its first token is sent.
	trace func(requestTrace)

	bodyIdle  time.Duration // how long a body may stall (tests shorten it)
	releasing atomic.Bool   // a FreeOSMemory is under way
}

// requestTrace is what the model decided for one request.
type requestTrace struct {
	PromptTokens int
	GPUTokens    int
	CPUTokens    int
	QueueWait    time.Duration
	TTFT         time.Duration
}

// New builds the engine from cfg, which must be valid.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{
		cfg:     cfg,
		clock:   realClock{},
		cache:   kvcache.New(cfg.BlockSize, cfg.gpuBlocks(), cfg.cpuBlocks()),
		dice:    newDice(cfg),
		started: time.Now(),
	}
	s.metrics = newMetrics(cfg.Model, s.cache.Usage)
	s.sched = &scheduler{
		maxSeqs:    cfg.MaxNumSeqs,
		maxWaiting: cfg.MaxWaiting,
		unlimited:  cfg.ZeroLatency || cfg.fixedMode(),
		onChange: func(running, waiting int) {
			s.metrics.running.Set(float64(running))
			s.metrics.waiting.Set(float64(waiting))
		},
	}
	return s, nil
}

// ServeHTTP routes the OpenAI, vLLM and LMCache endpoints.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength >= bigBody {
		defer s.releaseMemory()
	}
	switch r.URL.Path {
	case "/v1/chat/completions":
		if s.method(w, r, http.MethodPost) {
			s.handleGenerate(w, r, endpointChat)
		}
	case "/v1/completions":
		if s.method(w, r, http.MethodPost) {
			s.handleGenerate(w, r, endpointCompletions)
		}
	case "/v1/models":
		if s.method(w, r, http.MethodGet) {
			s.handleModels(w)
		}
	case "/tokenize":
		if s.method(w, r, http.MethodPost) {
			s.handleTokenize(w, r)
		}
	case "/detokenize":
		if s.method(w, r, http.MethodPost) {
			s.handleDetokenize(w, r)
		}
	case "/metrics":
		if s.method(w, r, http.MethodGet) {
			s.metrics.handler.ServeHTTP(w, r)
		}
	case "/status":
		if s.method(w, r, http.MethodGet) {
			s.handleStatus(w)
		}
	case "/reset_prefix_cache":
		if s.method(w, r, http.MethodPost) {
			writeJSON(w, http.StatusOK, map[string]any{"dropped_blocks": s.cache.Reset()})
		}
	case "/health":
		if s.method(w, r, http.MethodGet) {
			w.WriteHeader(http.StatusOK)
		}
	case "/version":
		if s.method(w, r, http.MethodGet) {
			writeJSON(w, http.StatusOK, map[string]string{"version": "kvbench-sim"})
		}
	default:
		writeError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("no route for %s", r.URL.Path))
	}
}

// method answers 405 unless r uses want (GET also allows HEAD).
func (s *Server) method(w http.ResponseWriter, r *http.Request, want string) bool {
	if r.Method == want || (want == http.MethodGet && r.Method == http.MethodHead) {
		return true
	}
	w.Header().Set("Allow", want)
	writeError(w, http.StatusMethodNotAllowed, "MethodNotAllowedError", fmt.Sprintf("%s %s is not allowed; use %s", r.Method, r.URL.Path, want))
	return false
}

func (s *Server) handleModels(w http.ResponseWriter) {
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data": []map[string]any{{
			"id":            s.cfg.Model,
			"object":        "model",
			"created":       s.started.Unix(),
			"owned_by":      "kvbench",
			"root":          s.cfg.Model,
			"parent":        nil,
			"max_model_len": s.cfg.MaxModelLen,
		}},
	})
}

// handleStatus answers like LMCache's /status, so tokens-per-GB can be
// read from it: 1073741824 / cache_size_per_token == --tokens-per-gb.
func (s *Server) handleStatus(w http.ResponseWriter) {
	perToken, _ := cacheSizePerToken(s.cfg.TokensPerGB)
	gpu, cpu := s.cache.Resident()
	gpuCap, cpuCap := s.cache.Capacity()
	writeJSON(w, http.StatusOK, map[string]any{
		"cache_context_meta": map[string]any{
			"0": map[string]any{
				"model_name":      s.cfg.Model,
				"kv_cache_layout": map[string]any{"cache_size_per_token": perToken, "block_size": s.cfg.BlockSize},
				"world_size":      1,
			},
		},
		// LMCache's storage manager reports its first (CPU) tier's
		// capacity here; kv-tier-pressure sizes its pool from it.
		"storage_manager": map[string]any{
			"memory_total_bytes": int64(s.cfg.CPUKVGB * gibibyte),
			"l1_manager":         map[string]any{"memory_total_bytes": int64(s.cfg.CPUKVGB * gibibyte)},
		},
		"tiers": map[string]any{
			"gpu": map[string]any{"capacity_tokens": gpuCap, "used_tokens": gpu * s.cfg.BlockSize},
			"cpu": map[string]any{"capacity_tokens": cpuCap, "used_tokens": cpu * s.cfg.BlockSize},
		},
	})
}

type tokenizeRequest struct {
	Model               string        `json:"model"`
	Prompt              *string       `json:"prompt"`
	Messages            []wireMessage `json:"messages"`
	AddGenerationPrompt *bool         `json:"add_generation_prompt"`
}

func (s *Server) handleTokenize(w http.ResponseWriter, r *http.Request) {
	var req tokenizeRequest
	if !s.decode(w, r, &req) || !s.checkModel(w, req.Model) {
		return
	}
	var ids []uint32
	switch {
	case req.Prompt != nil:
		ids = tokenize(nil, *req.Prompt)
	case req.Messages != nil:
		msgs, err := parseMessages(req.Messages)
		if err != nil {
			writeError(w, http.StatusBadRequest, "BadRequestError", err.Error())
			return
		}
		ids = applyTemplate(msgs, req.AddGenerationPrompt == nil || *req.AddGenerationPrompt)
	default:
		writeError(w, http.StatusBadRequest, "BadRequestError", "either prompt or messages is required")
		return
	}
	if ids == nil {
		ids = []uint32{}
	}
	if req.Prompt != nil {
		s.vocab.learn(*req.Prompt)
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"count":         len(ids),
		"max_model_len": s.cfg.MaxModelLen,
		"tokens":        ids,
		"token_strs":    nil,
	})
}

type detokenizeRequest struct {
	Model  string   `json:"model"`
	Tokens []uint32 `json:"tokens"`
}

// handleDetokenize mirrors /tokenize (vLLM's shape: {"prompt"}). Token ids
// are hashes of their bytes, so only ids the server has produced through
// /tokenize can be turned back into text; any other id is a 400 naming it.
func (s *Server) handleDetokenize(w http.ResponseWriter, r *http.Request) {
	var req detokenizeRequest
	if !s.decode(w, r, &req) || !s.checkModel(w, req.Model) {
		return
	}
	text, err := s.vocab.detokenize(req.Tokens)
	if err != nil {
		writeError(w, http.StatusBadRequest, "BadRequestError", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"prompt": text})
}

// decode reads a JSON body of at most --max-body-bytes into v. Bigger
// bodies are refused with 413 without being read whole. The body is read
// into one buffer of its announced size (no doubling) and dropped once
// decoded, so a request costs about twice its body; a body that makes no
// progress for bodyIdle closes the connection.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	limit := s.cfg.MaxBodyBytes
	if r.ContentLength > limit {
		writeError(w, http.StatusRequestEntityTooLarge, "RequestTooLargeError",
			fmt.Sprintf("request body of %d bytes is over the limit of %d bytes", r.ContentLength, limit))
		return false
	}
	body, err := s.readBody(w, r, limit)
	if err == nil {
		err = json.Unmarshal(body, v)
		body = nil
	}
	if err == nil {
		return true
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, "RequestTooLargeError",
			fmt.Sprintf("request body is over the limit of %d bytes", limit))
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestTimeout, "RequestTimeoutError",
			fmt.Sprintf("the request body stopped arriving for %s", s.idle()))
	default:
		writeError(w, http.StatusBadRequest, "BadRequestError", "invalid JSON body: "+err.Error())
	}
	return false
}

// bodyIdleTimeout is how long a request body may make no progress.
const bodyIdleTimeout = 10 * time.Second

// bigBody is the body size from which the memory a request used is given
// back to the system when it ends.
const bigBody = 4 << 20

func (s *Server) idle() time.Duration {
	if s.bodyIdle > 0 {
		return s.bodyIdle
	}
	return bodyIdleTimeout
}

// readBody reads the whole body under a read deadline renewed on every
// read that makes progress, then clears the deadline (the response may
// stream for minutes).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	rc := http.NewResponseController(w)
	idle := s.idle()
	src := http.MaxBytesReader(w, r.Body, limit)
	body, err := readAll(r.ContentLength, func(b []byte) (int, error) {
		// Without a connection (a handler called directly) there is no
		// deadline to set; the body is read as is.
		rc.SetReadDeadline(time.Now().Add(idle))
		return src.Read(b)
	})
	if err != nil {
		// A stalled connection stays expired: nothing more is read from
		// it and the server closes it after the answer.
		rc.SetReadDeadline(time.Now())
		return nil, err
	}
	rc.SetReadDeadline(time.Time{})
	return body, nil
}

// readAll reads a body of n bytes (n < 0: unknown) through read.
func readAll(n int64, read func([]byte) (int, error)) ([]byte, error) {
	if n >= 0 {
		buf := make([]byte, n)
		for off := 0; off < len(buf); {
			k, err := read(buf[off:])
			off += k
			if err != nil && off < len(buf) {
				if errors.Is(err, io.EOF) {
					return nil, io.ErrUnexpectedEOF
				}
				return nil, err
			}
		}
		return buf, nil
	}
	var buf []byte
	chunk := make([]byte, 32<<10)
	for {
		k, err := read(chunk)
		buf = append(buf, chunk[:k]...)
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// releaseMemory gives the memory of big bodies back to the system, at
// most once at a time.
func (s *Server) releaseMemory() {
	if !s.releasing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer s.releasing.Store(false)
		debug.FreeOSMemory()
	}()
}

// checkModel answers 404 for a model other than the served one. An empty
// model means the served one, as in vLLM.
func (s *Server) checkModel(w http.ResponseWriter, model string) bool {
	if model == "" || model == s.cfg.Model {
		return true
	}
	writeError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", model))
	return false
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body = errorBody(status, "InternalServerError", err.Error())
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// writeError sends an OpenAI-shaped error, with vLLM's type names and the
// status as code.
func writeError(w http.ResponseWriter, status int, typ, msg string) {
	body := errorBody(status, typ, msg)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

func errorBody(status int, typ, msg string) []byte {
	b, _ := json.Marshal(map[string]any{
		"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": status},
	})
	return b
}
