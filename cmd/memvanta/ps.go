package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/memvanta/memvanta/native/serve"
)

// defaultServer is where client commands find a running serve: --host,
// else $MEMVANTA_HOST, else serve's own default address.
const defaultServer = "http://127.0.0.1:8080"

// serverURL turns --host (or $MEMVANTA_HOST) into a base URL: a bare
// host:port, as OLLAMA_HOST is often written, gets http://.
func serverURL(host string) string {
	if host == "" {
		host = os.Getenv("MEMVANTA_HOST")
	}
	if host == "" {
		return defaultServer
	}
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	return strings.TrimRight(host, "/")
}

// runPs lists the models a running server holds in memory (ollama ps).
func runPs(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("ps", "ps [--host URL] [--json]",
		"List the models a running memvanta serve holds in memory (as ollama ps): their memory in the\n"+
			"budget (weights and KV caches at full context), the KV pages allocated now, and when an idle\n"+
			"model is unloaded. Reads the server's GET /api/ps.")
	var host, apiKey string
	var jsonOut bool
	c.group("Options")
	c.stringVar(&host, "host", "URL", "", "the server (default $MEMVANTA_HOST, else "+defaultServer+"; host:port accepted)")
	c.stringVar(&apiKey, "api-key", "KEY", "", "the server's API key (also read from MEMVANTA_API_KEY)")
	c.boolVar(&jsonOut, "json", "print the server's reply as is")
	if done, st := c.parse(args, stdout, stderr, false); done {
		return st
	}
	if apiKey == "" {
		apiKey = os.Getenv("MEMVANTA_API_KEY")
	}
	base := serverURL(host)
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "memvanta ps: "+format+"\n", a...)
		return exitRuntime
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/ps", nil)
	if err != nil {
		return fail("%v", err)
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fail("is memvanta serve running at %s? %v", base, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fail("reading %s/api/ps: %v", base, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fail("%s/api/ps: %s: %s", base, resp.Status, strings.TrimSpace(string(body)))
	}
	var ps serve.PSReply
	if err := json.Unmarshal(body, &ps); err != nil {
		return fail("%s/api/ps: not a memvanta reply: %v", base, err)
	}
	w := bufio.NewWriter(stdout)
	if jsonOut {
		w.Write(body)
		return finishOutput(w, c.name, stderr)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSIZE\tWEIGHTS\tKV\tKV IN USE\tUNTIL")
	now := time.Now()
	for _, m := range ps.Models {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", m.Name, humanBytes(m.Size), humanBytes(m.WeightBytes), humanBytes(m.KVBytes),
			humanBytes(m.KVAllocated), until(m, now))
	}
	tw.Flush()
	if ps.BudgetBytes > 0 {
		fmt.Fprintf(w, "\n%s of the %s memory budget in use; %d models served\n", humanBytes(ps.UsedBytes), humanBytes(ps.BudgetBytes), ps.ModelsServed)
	}
	return finishOutput(w, c.name, stderr)
}

func until(m serve.PSModel, now time.Time) string {
	switch {
	case m.Requests > 0:
		return fmt.Sprintf("in use (%d requests)", m.Requests)
	case m.ExpiresAt == nil:
		return "Forever"
	}
	d := m.ExpiresAt.Sub(now).Round(time.Second)
	if d <= 0 {
		return "Stopping..."
	}
	return d.String() + " from now"
}

func humanBytes(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}
