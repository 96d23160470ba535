package bench

import (
	"fmt"

	"github.com/kvbench/kvbench/sim"
)

// BuiltinURL is the engine URL that asks for the built-in simulated
// engine instead of a real one (`--engine-url builtin`).
const BuiltinURL = "builtin"

// StartBuiltin starts the built-in simulated engine on a free loopback
// port, for one run or one doctor check; the caller closes it. model ""
// keeps the simulator's own name; speed scales its delays (0 means 1).
// It is the only place the built-in engine is started: `kvbench run`, the
// form's runs, `kvbench doctor` and the doctor screen all come here.
func StartBuiltin(model string, speed float64) (*sim.Running, error) {
	return startBuiltin(model, speed, 0)
}

// startBuiltin is StartBuiltin with a CPU tier of cpuGB (0: none).
func startBuiltin(model string, speed, cpuGB float64) (*sim.Running, error) {
	sc := sim.DefaultConfig()
	sc.CPUKVGB = cpuGB
	sc.Listen = "127.0.0.1:0"
	if speed > 0 {
		sc.Speed = speed
	}
	if model != "" {
		sc.Model = model
	}
	run, err := sim.Start(sc)
	if err != nil {
		return nil, fmt.Errorf("start the built-in engine: %w", err)
	}
	return run, nil
}

// BuiltinKVGB is the built-in engine's KV cache (its GPU tier) in GB: a
// run against it sizes its workload to this unless a budget was given.
func BuiltinKVGB() float64 { return sim.DefaultConfig().GPUKVGB }

// BuiltinTokensPerGB is the built-in engine's tokens per GB of KV cache,
// the figure a run against it reads from its /status.
func BuiltinTokensPerGB() int { return sim.DefaultConfig().TokensPerGB }
