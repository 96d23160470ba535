package workload

import (
	"fmt"

	"github.com/kvbench/kvbench/bench/load"
)

// How each workload holds measured requests back by design, for the
// delivered-load verdict (spec/load.md). random-prefill sends everything
// at once and never holds a request back.

func (w *LongDocQA) HoldBack() *load.HoldBack {
	return &load.HoldBack{
		What: fmt.Sprintf("its in-flight cap (--ldqa-num-inflight-requests %d) was full", w.inflight),
		Fix:  "raise --ldqa-num-inflight-requests or lower --request-rate",
	}
}

func (w *LongDocPermutator) HoldBack() *load.HoldBack {
	return &load.HoldBack{
		What: fmt.Sprintf("its in-flight cap (--ldp-num-inflight-requests %d) was full", w.inflight),
		Fix:  "raise --ldp-num-inflight-requests or lower --request-rate",
	}
}

func (w *MultiRoundChat) HoldBack() *load.HoldBack {
	return &load.HoldBack{
		What: fmt.Sprintf("a busy chat session (%d session(s); a session's next turn waits for its previous answer)", w.users),
		Fix:  "give it more sessions through a larger --kv-cache-volume (or shorter --mrc-shared-prompt-length / --mrc-chat-history-length), or lower --mrc-qps (--request-rate)",
	}
}

func (w *CacheProbe) HoldBack() *load.HoldBack {
	return &load.HoldBack{
		What: "its first and repeated requests go one after another",
		Fix:  "lower --request-rate",
	}
}

func (w *ConcurrentExactness) HoldBack() *load.HoldBack {
	return &load.HoldBack{
		What: "each concurrency level holds at most its own number of streams and waits for the level before",
		Fix:  "lower --request-rate",
	}
}

func (w *PrefixSuffixTuner) HoldBack() *load.HoldBack {
	return &load.HoldBack{
		What: "it sends one request at a time, in order",
		Fix:  "lower --request-rate",
	}
}
