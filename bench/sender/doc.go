// Package sender owns kvbench's side of the wire: it sends one streaming
// OpenAI request (chat or completions), parses the SSE reply and measures
// it into a Result, the line of requests.jsonl defined by spec/record.md.
//
// Entry points:
//
//   - NormalizeURL turns an --engine-url value into the API base.
//   - New/Client.Do send and measure; Client.Models lists model ids.
//   - Measure parses and measures an SSE body without HTTP (recorded
//     streams, other packages' tests), exactly as Do does after a 200.
//   - CompareFingerprint compares two results' output or token hashes.
//
// The stream path is built for thousands of concurrent streams: per chunk
// there is no allocation, goroutine, channel send or lock. A pooled state
// per request holds the read buffer, the two SHA-256 hashers and the chunk
// arrival times; chunks are decoded (chunk.go) by the validating JSON
// scanner of internal/jsonscan, extracting only the fields the record
// needs; the idle watchdog costs one atomic store per read.
//
// Memory per request is bounded whatever the engine sends: the body by
// Options.MaxResponseBytes (response_too_long), a line by MaxLineBytes,
// the arrival times by maxExactChunks (16384; past it the gaps go to a
// GapHistogram of 21 KiB, within 1/128 of the exact percentiles), a
// finish_reason by 64 bytes, an error detail by 200.
//
// Where spec/record.md leaves room, this package decides:
//
//   - Error codes add `response_too_long` (the body passed
//     Options.MaxResponseBytes, default 256 MiB: an engine that never ends
//     its stream), `canceled` (the caller's context ended the request;
//     `timeout` when it was the caller's deadline), `invalid_request` (the
//     body could not be encoded: NaN temperature, unencodable extra body,
//     unknown endpoint) and `internal` (a recovered bug).
//   - The first error ends the stream: nothing after it is read, so an
//     errored stream is never complete. A read error after the headers
//     (reset, truncated chunked body) is `incomplete`.
//   - SSE: events with any type other than `error` are read as data; `id`
//     and `retry` are ignored; at EOF an unterminated last event is used
//     when it is `[DONE]` or valid JSON and dropped otherwise (a truncated
//     chunk makes the stream `incomplete`, not `invalid_json`). The line
//     limit also bounds one event's joined data. A JSON value that is not
//     an object is `invalid_json`; a top-level `"object": "error"` (vLLM)
//     counts as an error object like a non-null `error`. Invalid UTF-8 in
//     text is replaced by U+FFFD, as encoding/json does. A member repeated
//     in one JSON object counts once, the last one winning (as Python's
//     json module reads it).
//   - Arrival times are taken once per network read: every chunk completed
//     by one read shares that read's instant. A read that follows one which
//     filled its buffer, and returns within 100 µs (chainWait), returned
//     bytes that were already waiting: it shares the previous read's
//     instant, so a reply written at once is one read however many reads
//     the buffer sizes cut it into. Output that arrived in one read (every
//     content chunk at the first token's instant; two tokens or more) has
//     decode speed, ITL and round gaps null and DecodeUnmeasured
//     "one_read": the span between such chunks is the client's reading,
//     not the engine's decoding. The round gaps are nulled with ITL (the
//     spec names ITL and TPOT) because they are the same intervals.
//   - Usage: the last non-null `usage` object wins whole (fields are not
//     merged with earlier ones); a non-object usage makes every count
//     invalid. `cache_n` comes from the last non-null `timings` object;
//     `token_sha` is the last valid one seen.
//   - Receipts: an absent or null `prompt_tokens_details`, or an absent
//     or null `cached_tokens` in it, is `details_absent`; a details value
//     that is not an object is `invalid_count`. Integers above MaxCount
//     (2^40) are invalid. Precedence: see stream.receipt.
//   - Text from the engine: every error detail (HTTP error bodies, error
//     objects and `event: error` frames in a stream, malformed chunks,
//     status lines, Content-Type, transport errors) passes one redactor
//     (detail.go) in stream.fail: the API key, the URL's password and the
//     Basic credential sent are replaced by [redacted] over the whole text
//     before it is cut (and a window cut from a long body drops a
//     secret's start at its end), then the text is cleaned with
//     textclean.Line and cut to 200 bytes. finish_reason and model ids
//     are cleaned too (model ids also redacted; an id over 1 KiB is left
//     out). Reply text (Result.Text) is passed through as the engine sent
//     it: whoever prints it cleans it.
//   - Chunks: a chunk counts once however many choices it carries; if an
//     engine sends several choices their texts are concatenated in order.
//     Per delta the reasoning hashed is reasoning_content when it is a
//     non-empty string, else reasoning. ReasoningField is the field of the
//     first reasoning text.
//   - decode_speed is computed for successful requests only (null otherwise);
//     TTFT and first_token_time are recorded whenever a first token came.
//     tokens_per_chunk needs a complete, error-free stream with a valid
//     completion_tokens and at least one chunk. ITL uses completion_tokens
//     only (never the chunk count) as the token count; the ITL mean is
//     (last chunk - first chunk) / (tokens - 1).
//   - token_sha, like output_sha256, is null unless the stream is
//     complete and carried some non-empty content or reasoning.
//   - A complete stream with no first token and no completion tokens is
//     unsuccessful with a null error.
//   - The idle timeout runs from the response headers on; before them
//     only the request timeout applies (engines may queue requests).
//   - Connections: a request whose reused connection fails before any
//     response byte (EOF, reset or a failed write: how a server that
//     closed a kept-alive connection shows) is sent once more through a
//     second transport that never reuses connections, and Result.Retries
//     is 1. Whether the connection was reused and whether a byte came
//     back are read from net/http/httptrace. Timeouts and cancellation
//     are never retried. A retry that fails is the request's error.
//   - decode_speed is null when fewer than two output tokens came.
//   - Bodies: max_tokens is omitted when Request.MaxTokens <= 0; extra
//     bodies merge per top-level key, the request's over the client's, and
//     a key kvbench sets itself takes the extra value in place.
package sender
