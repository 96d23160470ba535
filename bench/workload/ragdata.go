package workload

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
)

// RAGSample is one usable dataset record.
type RAGSample struct {
	ID       string
	Passages []string // "title\ntext" or the text alone
	Question string
	Answers  []string
}

// ragDatasets are the two named datasets and where they are fetched from
// (Hugging Face, or $HF_ENDPOINT when set).
var ragDatasets = map[string]struct{ repo, file string }{
	"musique":  {"dgslibisey/MuSiQue", "musique_ans_v1.0_dev.jsonl"},
	"hotpotqa": {"hotpotqa/hotpot_qa", "distractor/validation-00000-of-00001.parquet"},
}

// ragCacheDir is where named datasets are kept: $XDG_CACHE_HOME/kvbench/datasets,
// else ~/.cache/kvbench/datasets.
func ragCacheDir() string {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "kvbench", "datasets")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "kvbench", "datasets")
}

// RAGDatasetPath resolves --rag-dataset: a local file as is, or a named
// dataset from the cache, downloaded on first use. Offline, the error
// says which file to fetch and where to put it.
func RAGDatasetPath(ctx context.Context, name string) (string, error) {
	ds, named := ragDatasets[name]
	if !named {
		if _, err := os.Stat(name); err != nil {
			return "", fmt.Errorf("--rag-dataset: %q is neither musique, hotpotqa nor a readable file: %v", name, err)
		}
		return name, nil
	}
	dst := filepath.Join(ragCacheDir(), name, filepath.Base(ds.file))
	if fi, err := os.Stat(dst); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
		return dst, nil
	}
	endpoint := strings.TrimRight(os.Getenv("HF_ENDPOINT"), "/")
	if endpoint == "" {
		endpoint = "https://huggingface.co"
	}
	url := fmt.Sprintf("%s/datasets/%s/resolve/main/%s", endpoint, ds.repo, ds.file)
	offline := func(cause error) error {
		return fmt.Errorf("--rag-dataset %s: cannot download %s (%v); fetch that file and put it at %s, or give a local .jsonl, .json or .parquet file", name, url, cause, dst)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", offline(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) {
			err = ue.Unwrap()
		}
		return "", offline(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", offline(fmt.Errorf("HTTP %d", resp.StatusCode))
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", offline(err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".download-*")
	if err != nil {
		return "", offline(err)
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, io.LimitReader(resp.Body, 4<<30)); err != nil {
		tmp.Close()
		return "", offline(err)
	}
	if err := tmp.Close(); err != nil {
		return "", offline(err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return "", offline(err)
	}
	return dst, nil
}

// LoadRAGSamples reads the first n usable records of a .jsonl, .json (a
// top-level list) or .parquet file, in file order. Records lacking
// passages, a question or an answer are skipped; none left is an error.
func LoadRAGSamples(path string, n int) ([]RAGSample, error) {
	var out []RAGSample
	index := 0
	add := func(rec map[string]any) bool {
		if s, ok := ragSample(rec, index); ok {
			out = append(out, s)
		}
		index++
		return len(out) < n
	}
	var err error
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl":
		err = readJSONL(path, add)
	case ".json":
		err = readJSONList(path, add)
	case ".parquet":
		err = readParquet(path, add)
	default:
		return nil, fmt.Errorf("--rag-dataset %s: want a .jsonl, .json or .parquet file", path)
	}
	if err != nil {
		return nil, fmt.Errorf("--rag-dataset %s: %v", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--rag-dataset %s: no usable record (each needs passages, a question and an answer)", path)
	}
	return out, nil
}

func readJSONL(path string, add func(map[string]any) bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal(b, &rec); err != nil {
			return fmt.Errorf("line %d: %v", line, err)
		}
		if !add(rec) {
			return nil
		}
	}
	return sc.Err()
}

func readJSONList(path string, add func(map[string]any) bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReader(f))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return errors.New("a .json dataset must be a top-level list of records")
	}
	for dec.More() {
		var rec map[string]any
		if err := dec.Decode(&rec); err != nil {
			return err
		}
		if !add(rec) {
			return nil
		}
	}
	return nil
}

// ragParquetRow is the columns kvbench reads from a Parquet dataset
// (HotpotQA's distractor set and records shaped like it); absent columns
// read as empty.
type ragParquetRow struct {
	ID            string   `parquet:"id,optional"`
	UID           string   `parquet:"_id,optional"`
	Question      string   `parquet:"question,optional"`
	Query         string   `parquet:"query,optional"`
	Answer        string   `parquet:"answer,optional"`
	Answers       []string `parquet:"answers,optional,list"`
	AnswerAliases []string `parquet:"answer_aliases,optional,list"`
	Context       struct {
		Title     []string   `parquet:"title,list"`
		Sentences [][]string `parquet:"sentences,list"`
	} `parquet:"context,optional"`
}

func readParquet(path string, add func(map[string]any) bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := parquet.NewGenericReader[ragParquetRow](f)
	defer r.Close()
	buf := make([]ragParquetRow, 64)
	for {
		n, err := r.Read(buf)
		for _, row := range buf[:n] {
			rec := map[string]any{}
			set := func(k, v string) {
				if v != "" {
					rec[k] = v
				}
			}
			set("id", row.ID)
			set("_id", row.UID)
			set("question", row.Question)
			set("query", row.Query)
			set("answer", row.Answer)
			if len(row.Answers) > 0 {
				rec["answers"] = toAny(row.Answers)
			}
			if len(row.AnswerAliases) > 0 {
				rec["answer_aliases"] = toAny(row.AnswerAliases)
			}
			if len(row.Context.Title) > 0 {
				sents := make([]any, len(row.Context.Sentences))
				for i, s := range row.Context.Sentences {
					sents[i] = toAny(s)
				}
				rec["context"] = map[string]any{"title": toAny(row.Context.Title), "sentences": sents}
			}
			if !add(rec) {
				return nil
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// ragSample extracts one record by the spec's rules (spec/workloads.md,
// rag-qa-quality): ok is false when it lacks passages, a question or an
// answer.
func ragSample(rec map[string]any, index int) (RAGSample, bool) {
	s := RAGSample{}
	switch {
	case str(rec["_id"]) != "":
		s.ID = str(rec["_id"])
	case str(rec["id"]) != "":
		s.ID = str(rec["id"])
	default:
		s.ID = strconv.Itoa(index)
	}
	s.Question = strings.TrimSpace(str(rec["question"]))
	if s.Question == "" {
		s.Question = strings.TrimSpace(str(rec["query"]))
	}
	// LMCache's order: a non-empty list of paragraphs, else a non-empty
	// ctxs or contexts, else context in any shape.
	switch {
	case len(list(rec["paragraphs"])) > 0:
		s.Passages = ragPassages(rec["paragraphs"])
	case len(list(rec["ctxs"])) > 0:
		s.Passages = ragPassages(rec["ctxs"])
	case len(list(rec["contexts"])) > 0:
		s.Passages = ragPassages(rec["contexts"])
	case rec["context"] != nil:
		s.Passages = ragPassages(rec["context"])
	}
	if a, ok := rec["answers"]; ok && a != nil {
		s.Answers = strs(a)
	} else {
		s.Answers = strs(rec["answer"])
	}
	s.Answers = append(s.Answers, strs(rec["answer_aliases"])...)
	var answers []string
	for _, a := range s.Answers {
		if strings.TrimSpace(a) != "" {
			answers = append(answers, a)
		}
	}
	s.Answers = answers
	return s, len(s.Passages) > 0 && s.Question != "" && len(s.Answers) > 0
}

// ragPassages reads the passage shapes: a list of objects (title + text
// fields), a list of [title, sentences] pairs, HotpotQA's {title: [...],
// sentences: [[...]]}, a list of strings, or one string. As in LMCache a
// passage is its trimmed title, a newline and its trimmed text, or the
// text alone when it has no title; a passage with neither is dropped, one
// with a title and a blank text is kept ("Empty\n").
func ragPassages(v any) []string {
	var out []string
	keep := func(title, text string) {
		text = strings.TrimSpace(text)
		if title = strings.TrimSpace(title); title != "" {
			text = title + "\n" + text
		}
		if text != "" {
			out = append(out, text)
		}
	}
	switch t := v.(type) {
	case string:
		keep("", t)
	case map[string]any:
		titles, sents := list(t["title"]), list(t["sentences"])
		for i := 0; i < min(len(titles), len(sents)); i++ {
			keep(str(titles[i]), textOf(sents[i]))
		}
	case []any:
		for _, e := range t {
			switch p := e.(type) {
			case string:
				keep("", p)
			case map[string]any:
				text := ""
				for _, k := range []string{"text", "paragraph_text", "content", "passage", "paragraph"} {
					if text = textOf(p[k]); text != "" {
						break
					}
				}
				keep(str(p["title"]), text)
			case []any:
				if len(p) == 2 {
					keep(str(p[0]), textOf(p[1]))
				}
			}
		}
	}
	return out
}

func textOf(v any) string {
	if l, ok := v.([]any); ok {
		return strings.Join(strs(l), "")
	}
	return str(v)
}

func str(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	}
	return ""
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

// strs is a string or a list of strings as a list.
func strs(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, e := range t {
			if s := str(e); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
