package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// bench-serve with a list of client counts runs every (round, K) in a
// process of its own, alternating K, and every run generates clients × n
// tokens; the summary pairs each round's runs.
func TestBenchServeRounds(t *testing.T) {
	model := storiesModel(t)
	r := mv(t, "", "bench-serve", "-m", model, "--clients", "1,2", "--rounds", "2", "-n", "5", "-p", "3", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var got struct {
		Runs    []benchServeResult
		Summary []struct {
			Clients int       `json:"clients"`
			Ratio   []float64 `json:"aggregate_ratio_per_round"`
			PeakRSS int64     `json:"peak_rss_bytes_max"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	wantK := []int{1, 2, 1, 2}
	if len(got.Runs) != len(wantK) {
		t.Fatalf("%d runs, want %d", len(got.Runs), len(wantK))
	}
	for i, run := range got.Runs {
		if run.Clients != wantK[i] || run.Round != i/2+1 {
			t.Errorf("run %d: %d clients in round %d, want %d in round %d", i, run.Clients, run.Round, wantK[i], i/2+1)
		}
		if run.GenTok != 5*run.Clients || run.AggTokS <= 0 || run.PeakRSS <= 0 || run.CPUSec <= 0 {
			t.Errorf("run %d: %+v", i, run)
		}
	}
	if len(got.Summary) != 2 || got.Summary[1].Clients != 2 || len(got.Summary[1].Ratio) != 2 || got.Summary[0].PeakRSS <= 0 {
		t.Errorf("summary %+v", got.Summary)
	}
	text := mv(t, "", "bench-serve", "-m", model, "--clients", "2,1", "-n", "2", "-p", "2")
	if text.code != 0 || !strings.Contains(text.stdout, "1 vs 2 clients: aggregate tok/s ratio per round") {
		t.Errorf("exit %d, stdout:\n%s\nstderr: %s", text.code, text.stdout, text.stderr)
	}
	for _, bad := range [][]string{{"--clients", "0"}, {"--clients", "1,x"}, {"--rounds", "0"}, {"--clients", "1,8", "--cpuprofile", "x"}} {
		if r := mv(t, "", append([]string{"bench-serve", "-m", model}, bad...)...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", bad, r.code, r.stderr)
		}
	}
}
