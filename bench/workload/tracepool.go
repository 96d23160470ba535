package workload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kvbench/kvbench/bench/enginehttp"
	"github.com/kvbench/kvbench/internal/errs"
)

// poolText is ordinary English prose: tokenized by the engine, its ids
// are a pool of ordinary tokens (no special token can come out of plain
// text tokenized without special tokens), and its short words are the
// candidates for one-token words.
const poolText = `the of and to in is it you that he was for on are as with his they at be this have from or one had by but not what all were we when your can said there use an each which she do how their if will up other about out many then them these so some her would make like him into time has look two more write go see way could people my than first water been call who oil its now find long down day did get come made may part over new sound take only little work know place year live me back give most very after thing our just name good man think say great where help through much line right too mean old any same tell boy follow came want show also around form three small set put end does another well large must big even such turn here why ask went men read need land different home us move try kind hand picture again change off play spell air away animal house point page letter mother answer found study still learn should world high every near add food between own below country plant last school father keep tree never start city earth eye light thought head under story saw left few while along might close something seem next hard open example begin life always those both paper together got group often run important until children side feet car mile night walk white sea began grow took river four carry state once book hear stop without second late miss idea enough eat face watch far real almost let above girl sometimes mountain cut young talk soon list song being leave family body music color stand sun question fish area mark dog horse bird problem complete room knew since ever piece told usually friend easy heard order red door sure become top ship across today during short better best however low hour black product happen whole measure remember early wave reach listen wind rock space cover fast several hold himself toward five step morning pass vowel true hundred against pattern table north slow money map farm pull draw voice power town fine drive lead cry dark machine note wait plan figure star box noun field rest able pound done beauty stood contain front teach week final gave green quick develop ocean warm free minute strong special mind behind clear tail produce fact street inch lot nothing course stay wheel full force blue object decide surface deep moon island foot yet busy test record boat common gold possible plane age dry wonder laugh thousand ago ran check game shape yes hot bring heat snow bed fill east weight language among`

// tokenizer talks to the engine's /tokenize (vLLM and the simulator:
// prompt; llama.cpp: content), without special tokens.
type tokenizer struct {
	url, key, model string
	hc              *http.Client
}

func newTokenizer(e *Engine) *tokenizer {
	return &tokenizer{
		url: strings.TrimSuffix(e.BaseURL, "/v1") + "/tokenize", key: e.APIKey, model: e.Model,
		hc: &http.Client{Timeout: 30 * time.Second},
	}
}

// errNoTokenize is an engine without a usable /tokenize.
var errNoTokenize = errors.New("no /tokenize endpoint")

func (t *tokenizer) tokenize(ctx context.Context, text string) ([]uint32, error) {
	body, _ := json.Marshal(map[string]any{
		"model": t.model, "prompt": text, "content": text,
		"add_special_tokens": false, "add_special": false,
	})
	resp, err := enginehttp.Do(ctx, t.hc, enginehttp.Request{Method: http.MethodPost, URL: t.url, Body: body,
		Auth: enginehttp.Auth{Key: t.key}, Max: 64 << 20})
	if err != nil {
		return nil, fmt.Errorf("POST /tokenize: %w", errs.Root(err))
	}
	b := resp.Body
	if resp.Status == http.StatusNotFound || resp.Status == http.StatusMethodNotAllowed {
		return nil, errNoTokenize
	}
	if resp.Status != http.StatusOK {
		return nil, fmt.Errorf("POST /tokenize: HTTP %d", resp.Status)
	}
	var doc struct {
		Tokens []uint32 `json:"tokens"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || doc.Tokens == nil {
		return nil, fmt.Errorf("%w (the answer carries no list of token ids)", errNoTokenize)
	}
	return doc.Tokens, nil
}

// learnPool returns the distinct ordinary token ids of poolText, in the
// order they first appear (so a seed gives the same pool on the same
// engine). Ids the engine returns for an empty text (special tokens it
// adds anyway) are left out.
func learnPool(ctx context.Context, t *tokenizer) ([]uint32, error) {
	specials := map[uint32]bool{}
	if ids, err := t.tokenize(ctx, ""); err == nil {
		for _, id := range ids {
			specials[id] = true
		}
	} else if errors.Is(err, errNoTokenize) {
		return nil, err
	}
	ids, err := t.tokenize(ctx, poolText)
	if err != nil {
		return nil, err
	}
	seen := map[uint32]bool{}
	var pool []uint32
	for _, id := range ids {
		if !seen[id] && !specials[id] {
			seen[id] = true
			pool = append(pool, id)
		}
	}
	return pool, nil
}

// oneTokenWords returns the words of poolText that the engine confirms
// are one token each, alone and after another word ("w w" is two
// tokens), with the id each has inside a text.
func oneTokenWords(ctx context.Context, t *tokenizer) ([]string, []uint32, error) {
	seen := map[string]bool{}
	var cands []string
	for _, w := range strings.Fields(poolText) {
		if !seen[w] {
			seen[w] = true
			cands = append(cands, w)
		}
	}
	type res struct {
		ok bool
		id uint32
	}
	out := make([]res, len(cands))
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, w := range cands {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			one, err := t.tokenize(ctx, w)
			if err == nil && len(one) == 1 {
				var two []uint32
				two, err = t.tokenize(ctx, w+" "+w)
				if err == nil && len(two) == 2 && two[0] == one[0] {
					out[i] = res{true, two[1]}
				}
			}
			if err != nil {
				mu.Lock()
				firstErr = cmpErr(firstErr, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, nil, firstErr
	}
	var words []string
	var ids []uint32
	for i, r := range out {
		if r.ok {
			words = append(words, cands[i])
			ids = append(ids, r.id)
		}
	}
	return words, ids, nil
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// estimatedWords are one token on common BPE tokenizers: the text mode's
// words when the engine cannot be asked.
var estimatedWords = func() []string {
	var out []string
	for _, w := range strings.Fields(poolText) {
		if len(w) <= 3 {
			out = append(out, w)
		}
	}
	sort.Strings(out)
	return compactStrings(out)
}()

func compactStrings(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// maxModelLen reads the engine's context length: vLLM's and the
// simulator's max_model_len in /v1/models, else llama.cpp's n_ctx in
// /props. 0 when the engine reports none.
func maxModelLen(ctx context.Context, e *Engine) int {
	hc := &http.Client{Timeout: 10 * time.Second}
	get := func(url string, v any) bool {
		resp, err := enginehttp.Do(ctx, hc, enginehttp.Request{URL: url, Auth: enginehttp.Auth{Key: e.APIKey}})
		return err == nil && resp.Status == http.StatusOK && json.Unmarshal(resp.Body, v) == nil
	}
	var models struct {
		Data []struct {
			ID          string `json:"id"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	if get(e.BaseURL+"/models", &models) {
		for _, m := range models.Data {
			if m.MaxModelLen > 0 && (m.ID == e.Model || len(models.Data) == 1) {
				return m.MaxModelLen
			}
		}
	}
	var props struct {
		NCtx     int `json:"n_ctx"`
		Defaults struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	if get(strings.TrimSuffix(e.BaseURL, "/v1")+"/props", &props) {
		if props.Defaults.NCtx > 0 {
			return props.Defaults.NCtx
		}
		return props.NCtx
	}
	return 0
}
