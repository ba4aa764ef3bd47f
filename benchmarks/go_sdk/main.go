// The official OpenSandbox Go SDK (sdks/sandbox/go) on client_benchmark's workload, against
// the same `ngfail serve`, for benchmarks/run: `echo 1` execs one at a time (ten blocks),
// PARALLEL at once (as many goroutines, each taking the next exec), and the Go heap per exec in flight (1,024 `sleep 1` execs at once).
// Prints Google Benchmark JSON, as client_benchmark does.
//
//	go_sdk_benchmark HOST:PORT API_KEY ROUNDS PARALLEL [--paced]
//
// --paced: client_benchmark runs this program as its peer (NGFAIL_PEER_BENCHMARK), so that
// the blocks of the two clients alternate in time. It prints "ready" once warmed up, then
// runs one block (after 50 unmeasured execs) for each line "block" it reads, printing "done"
// after each; at the end of its input it measures the rest and prints its JSON.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	opensandbox "github.com/alibaba/OpenSandbox/sdks/sandbox/go"
)

type entry struct {
	Name            string  `json:"name"`
	RunName         string  `json:"run_name"`
	RepetitionIndex int     `json:"repetition_index"`
	RealTime        float64 `json:"real_time"`
	TimeUnit        string  `json:"time_unit"`
}

func one(name string, value float64) entry {
	return entry{Name: name, RunName: name, RealTime: value, TimeUnit: "ns"}
}

func fail(what string, err error) {
	fmt.Fprintf(os.Stderr, "go_sdk_benchmark: %s: %v\n", what, err)
	os.Exit(1)
}

// Nanoseconds per exec over `n` execs, `parallel` in flight at a time.
func run(ctx context.Context, s *opensandbox.Sandbox, command string, n, parallel int) float64 {
	var wg sync.WaitGroup
	var failures sync.Map
	work := make(chan struct{}, n)
	for i := 0; i < n; i++ {
		work <- struct{}{}
	}
	close(work)
	start := time.Now()
	for w := 0; w < parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				if _, err := s.RunCommand(ctx, command, nil); err != nil {
					failures.Store(err.Error(), true)
				}
			}
		}()
	}
	wg.Wait()
	failures.Range(func(k, _ any) bool { fail("exec", fmt.Errorf("%v", k)); return false })
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}

func main() {
	paced := len(os.Args) == 6 && os.Args[5] == "--paced"
	if len(os.Args) != 5 && !paced {
		fmt.Fprintln(os.Stderr, "usage: go_sdk_benchmark HOST:PORT API_KEY ROUNDS PARALLEL [--paced]")
		os.Exit(2)
	}
	rounds, _ := strconv.Atoi(os.Args[3])
	parallel, _ := strconv.Atoi(os.Args[4])
	ctx := context.Background()
	cfg := opensandbox.ConnectionConfig{Domain: os.Args[1], Protocol: "http", APIKey: os.Args[2]}
	s, err := opensandbox.CreateSandbox(ctx, cfg, opensandbox.SandboxCreateOptions{Image: "python:3.11"})
	if err != nil {
		fail("create", err)
	}
	var results []entry

	run(ctx, s, "echo 1", 50, 1) // warm up
	block := func(b int) {
		e := one("go_sdk_exec_one_at_a_time", run(ctx, s, "echo 1", max(1, rounds/10), 1))
		e.RepetitionIndex = b
		results = append(results, e)
	}
	if paced {
		runtime.GC() // the start's garbage collected now, not beside the client's first block
		fmt.Println("ready")
		for b, lines := 0, bufio.NewScanner(os.Stdin); lines.Scan(); b++ {
			if lines.Text() != "block" {
				fail("paced", fmt.Errorf("unexpected line %q", lines.Text()))
			}
			run(ctx, s, "echo 1", 50, 1) // warmed up again after waiting, as the client is
			block(b)
			runtime.GC() // its garbage collected now, not beside the client's next block
			fmt.Println("done")
		}
	} else {
		for b := 0; b < 10; b++ {
			block(b)
		}
	}
	results = append(results, one(fmt.Sprintf("go_sdk_exec_%d_at_once", parallel),
		run(ctx, s, "echo 1", max(rounds, parallel), parallel)))

	// The Go heap while 1,024 execs are in flight, sampled every 20 ms.
	const inFlight = 1024
	runtime.GC()
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	idle := stats.HeapAlloc
	done := make(chan struct{})
	highest := make(chan uint64)
	go func() {
		ticker := time.NewTicker(20 * time.Millisecond)
		defer ticker.Stop()
		peak := idle
		for {
			select {
			case <-done:
				highest <- peak
				return
			case <-ticker.C:
				var now runtime.MemStats
				runtime.ReadMemStats(&now)
				peak = max(peak, now.HeapAlloc)
			}
		}
	}()
	run(ctx, s, "sleep 1", inFlight, inFlight)
	close(done)
	results = append(results, one("go_sdk_kib_per_exec_in_flight", float64(<-highest-idle)/1024/inFlight))

	if err := s.Kill(ctx); err != nil {
		fail("kill", err)
	}
	out, _ := json.Marshal(map[string]any{"benchmarks": results})
	fmt.Println(string(out))
}
