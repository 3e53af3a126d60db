package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the unit of utime and stime in /proc/PID/stat: USER_HZ,
// 100 on every Linux kapi-load runs on.
const clockTicks = 100

// servers are the processes whose CPU and memory a run charges to the
// server: kapi alone, or kube-apiserver and etcd together.
type servers []int

// parsePIDs reads --pids: comma-separated process IDs.
func parsePIDs(value string) (servers, error) {
	var pids servers
	for _, field := range strings.Split(value, ",") {
		if field = strings.TrimSpace(field); field == "" {
			continue
		}
		pid, err := strconv.Atoi(field)
		if err != nil {
			return nil, fmt.Errorf("--pids: %q is not a process ID", field)
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d/stat", pid)); err != nil {
			return nil, fmt.Errorf("--pids: no process %d", pid)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// cpu is the user and system CPU time the processes have used.
func (s servers) cpu() time.Duration {
	var ticks int64
	for _, pid := range s {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// The command name (field 2) may hold spaces; the fields after its
		// closing parenthesis start with the state (field 3).
		rest := string(data[strings.LastIndexByte(string(data), ')')+2:])
		fields := strings.Fields(rest)
		if len(fields) < 13 {
			continue
		}
		utime, _ := strconv.ParseInt(fields[11], 10, 64) // field 14
		stime, _ := strconv.ParseInt(fields[12], 10, 64) // field 15
		ticks += utime + stime
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// rss is the processes' resident memory in bytes.
func (s servers) rss() int64 {
	var total int64
	for _, pid := range s {
		f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		scanner := bufio.NewScanner(f)
		for scanner.Scan() {
			if kb, ok := strings.CutPrefix(scanner.Text(), "VmRSS:"); ok {
				n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")), 10, 64)
				total += n * 1024
			}
		}
		f.Close()
	}
	return total
}

// result is one phase's figures.
type result struct {
	Phase string  `json:"phase"`
	N     int     `json:"n"`
	P50ms float64 `json:"p50_ms"`
	P99ms float64 `json:"p99_ms"`
	Rate  float64 `json:"per_second"`
	// CPUms is the servers' CPU time per operation (per delivered event
	// for watches), in milliseconds; 0 without --pids.
	CPUms float64 `json:"server_cpu_ms_per_op"`
	// RSSMiB is the servers' resident memory at the phase's end.
	RSSMiB float64 `json:"server_rss_mib"`
	Failed int     `json:"failed"`
}

// recorder measures phases and collects their results.
type recorder struct {
	servers servers
	results []result
	peakRSS int64
}

// measure runs a phase, which returns its operations' latencies (or, for
// watches, one per delivered event) and how many failed, and records it.
func (r *recorder) measure(name string, phase func() (latencies []time.Duration, failed int)) {
	cpuBefore, start := r.servers.cpu(), time.Now()
	latencies, failed := phase()
	elapsed, cpu := time.Since(start), r.servers.cpu()-cpuBefore
	res := result{Phase: name, N: len(latencies), Failed: failed, Rate: float64(len(latencies)) / elapsed.Seconds()}
	if len(latencies) > 0 {
		sorted := slices.Clone(latencies)
		slices.Sort(sorted)
		res.P50ms = milliseconds(sorted[(len(sorted)-1)/2])
		res.P99ms = milliseconds(sorted[(len(sorted)-1)*99/100])
		res.CPUms = milliseconds(cpu) / float64(len(latencies))
	}
	if len(r.servers) > 0 {
		rss := r.servers.rss()
		r.peakRSS = max(r.peakRSS, rss)
		res.RSSMiB = float64(rss) / (1 << 20)
		if len(latencies) == 0 {
			res.CPUms = milliseconds(cpu)
		}
	}
	r.results = append(r.results, res)
	printResult(res, len(r.servers) > 0)
}

func milliseconds(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func printHeader(withServer bool) {
	fmt.Printf("%-40s %7s %9s %9s %10s", "phase", "n", "p50 ms", "p99 ms", "per s")
	if withServer {
		fmt.Printf(" %12s %9s", "cpu ms/op", "rss MiB")
	}
	fmt.Println()
}

func printResult(r result, withServer bool) {
	fmt.Printf("%-40s %7d %9.2f %9.2f %10.0f", r.Phase, r.N, r.P50ms, r.P99ms, r.Rate)
	if withServer {
		fmt.Printf(" %12.3f %9.0f", r.CPUms, r.RSSMiB)
	}
	if r.Failed > 0 {
		fmt.Printf("  (%d failed)", r.Failed)
	}
	fmt.Println()
}

// writeResults saves the results for `kapi-load compare`.
func writeResults(path string, results []result) error {
	data, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

func readResults(path string) ([]result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var results []result
	if err := json.Unmarshal(data, &results); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return results, nil
}

// compare prints two runs side by side, phase by phase: server CPU per
// operation, its ratio, and the median latencies.
func compare(aPath, bPath string) error {
	a, err := readResults(aPath)
	if err != nil {
		return err
	}
	b, err := readResults(bPath)
	if err != nil {
		return err
	}
	byPhase := map[string]result{}
	for _, r := range b {
		byPhase[r.Phase] = r
	}
	fmt.Printf("%-40s %12s %12s %7s %9s %9s %8s %8s\n", "phase", "A cpu ms/op", "B cpu ms/op", "A/B", "A p50 ms", "B p50 ms", "A MiB", "B MiB")
	for _, ra := range a {
		rb, ok := byPhase[ra.Phase]
		if !ok {
			continue
		}
		ratio := "-"
		if rb.CPUms > 0 {
			ratio = fmt.Sprintf("%.2f", ra.CPUms/rb.CPUms)
		}
		fmt.Printf("%-40s %12.3f %12.3f %7s %9.2f %9.2f %8.0f %8.0f\n", ra.Phase, ra.CPUms, rb.CPUms, ratio, ra.P50ms, rb.P50ms, ra.RSSMiB, rb.RSSMiB)
	}
	return nil
}
