// Package gietest checks memvanta against the Gateway API Inference
// Extension's own code (sigs.k8s.io/gateway-api-inference-extension v1.5.0,
// the endpoint picker of llm-d and KServe): three memvanta serve replicas
// on loopback are scraped by GIE's metrics data source and core metrics
// extractor configured by deploy/k8s/inferencepool.yaml, and GIE's
// scheduler, built by GIE's configuration loader from the same file, picks
// a replica for each of a few hundred requests, which are then sent there.
// It is a module of its own so that the main module does not depend on
// Kubernetes.
package gietest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"sigs.k8s.io/gateway-api-inference-extension/pkg/epp/config/loader"
	fwkdl "sigs.k8s.io/gateway-api-inference-extension/pkg/epp/framework/interface/datalayer"
	fwkplugin "sigs.k8s.io/gateway-api-inference-extension/pkg/epp/framework/interface/plugin"
	"sigs.k8s.io/gateway-api-inference-extension/pkg/epp/framework/interface/requestcontrol"
	fwksched "sigs.k8s.io/gateway-api-inference-extension/pkg/epp/framework/interface/scheduling"
	attrprefix "sigs.k8s.io/gateway-api-inference-extension/pkg/epp/framework/plugins/datalayer/attribute/prefix"
	extractormetrics "sigs.k8s.io/gateway-api-inference-extension/pkg/epp/framework/plugins/datalayer/extractor/metrics"
	sourcemetrics "sigs.k8s.io/gateway-api-inference-extension/pkg/epp/framework/plugins/datalayer/source/metrics"
	"sigs.k8s.io/gateway-api-inference-extension/pkg/epp/framework/plugins/flowcontrol/fairness"
	"sigs.k8s.io/gateway-api-inference-extension/pkg/epp/framework/plugins/flowcontrol/ordering"
	"sigs.k8s.io/gateway-api-inference-extension/pkg/epp/framework/plugins/flowcontrol/saturationdetector/utilization"
	"sigs.k8s.io/gateway-api-inference-extension/pkg/epp/framework/plugins/flowcontrol/usagelimits"
	reqdataprodprefix "sigs.k8s.io/gateway-api-inference-extension/pkg/epp/framework/plugins/requestcontrol/dataproducer/approximateprefix"
	"sigs.k8s.io/gateway-api-inference-extension/pkg/epp/framework/plugins/requesthandling/parsers/openai"
	"sigs.k8s.io/gateway-api-inference-extension/pkg/epp/framework/plugins/scheduling/picker"
	"sigs.k8s.io/gateway-api-inference-extension/pkg/epp/framework/plugins/scheduling/profile"
	"sigs.k8s.io/gateway-api-inference-extension/pkg/epp/framework/plugins/scheduling/scorer/kvcacheutilization"
	"sigs.k8s.io/gateway-api-inference-extension/pkg/epp/framework/plugins/scheduling/scorer/prefix"
	"sigs.k8s.io/gateway-api-inference-extension/pkg/epp/framework/plugins/scheduling/scorer/queuedepth"
	"sigs.k8s.io/gateway-api-inference-extension/pkg/epp/scheduling"
)

// registerPlugins registers the plugin factories the configuration and
// GIE's system defaults use, as the EPP's runner does
// (cmd/epp/runner/runner.go, registerInTreePlugins, which is unexported).
var registerPlugins = sync.OnceFunc(func() {
	fwkplugin.Register(prefix.PrefixCacheScorerPluginType, prefix.PrefixCachePluginFactory)
	fwkplugin.Register(picker.MaxScorePickerType, picker.MaxScorePickerFactory)
	fwkplugin.Register(profile.SingleProfileHandlerType, profile.SingleProfileHandlerFactory)
	fwkplugin.Register(kvcacheutilization.KvCacheUtilizationScorerType, kvcacheutilization.KvCacheUtilizationScorerFactory)
	fwkplugin.Register(queuedepth.QueueScorerType, queuedepth.QueueScorerFactory)
	fwkplugin.Register(fairness.GlobalStrictFairnessPolicyType, fairness.GlobalStrictFairnessPolicyFactory)
	fwkplugin.Register(ordering.FCFSOrderingPolicyType, ordering.FCFSOrderingPolicyFactory)
	fwkplugin.Register(usagelimits.StaticUsageLimitPolicyType, usagelimits.StaticPolicyFactory)
	fwkplugin.Register(reqdataprodprefix.ApproxPrefixCachePluginType, reqdataprodprefix.ApproxPrefixCacheFactory)
	fwkplugin.Register(sourcemetrics.MetricsDataSourceType, sourcemetrics.MetricsDataSourceFactory)
	fwkplugin.Register(extractormetrics.MetricsExtractorType, extractormetrics.CoreMetricsExtractorFactory)
	fwkplugin.Register(openai.OpenAIParserType, openai.OpenAIParserPluginFactory)
	fwkplugin.Register(utilization.UtilizationDetectorType, utilization.UtilizationDetectorFactory)
})

// eppConfig is the EndpointPickerConfig text of deploy/k8s/inferencepool.yaml's
// ConfigMap.
func eppConfig(t *testing.T) []byte {
	t.Helper()
	for _, doc := range manifestDocs(t, "../k8s/inferencepool.yaml") {
		var cm struct {
			Kind string            `json:"kind"`
			Data map[string]string `json:"data"`
		}
		if err := yaml.Unmarshal(doc, &cm); err != nil {
			t.Fatal(err)
		}
		if cm.Kind == "ConfigMap" {
			if c, ok := cm.Data["memvanta-plugins.yaml"]; ok {
				return []byte(c)
			}
		}
	}
	t.Fatal("deploy/k8s/inferencepool.yaml has no ConfigMap with memvanta-plugins.yaml")
	return nil
}

// replica is one memvanta serve process.
type replica struct {
	name string
	url  string
	ep   *fwkdl.ModelServer // what the endpoint picker knows of it
	cmd  *exec.Cmd
}

var listening = regexp.MustCompile(`listening on (http://[^ ;]+)`)

// buildMemvanta builds the binary from the main module (the repository
// root) and writes a small synthetic model with a long context, so that a
// request can hold a slot for a while.
func buildMemvanta(t *testing.T) (bin, model string) {
	t.Helper()
	dir := t.TempDir()
	bin = filepath.Join(dir, "memvanta")
	b := exec.Command("go", "build", "-o", bin, "./cmd/memvanta")
	b.Dir = "../.."
	if out, err := b.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	model = filepath.Join(dir, "tiny.gguf")
	s := exec.Command(bin, "synth", "-q", "-o", model, "--layers", "2", "--embd", "64", "--heads", "4", "--kv-heads", "2",
		"--ff", "128", "--vocab", "400", "--type", "F32", "--ctx", "65536")
	if out, err := s.CombinedOutput(); err != nil {
		t.Fatalf("synth: %v\n%s", err, out)
	}
	return bin, model
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startReplicas(t *testing.T, bin, model string, n int) []*replica {
	t.Helper()
	var rs []*replica
	for i := 0; i < n; i++ {
		cmd := exec.Command(bin, "serve", "-m", model, "--alias", "tiny", "--port", "0", "-np", "2", "-c", "65536", "-t", "1",
			"--temp", "0", "--max-queue", "64")
		var stderr syncBuf
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r := &replica{name: fmt.Sprintf("memvanta-%d", i), cmd: cmd}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		for j := 0; ; j++ {
			if m := listening.FindStringSubmatch(stderr.String()); m != nil && strings.Contains(stderr.String(), "ready") {
				r.url = m[1]
				break
			}
			if j > 1200 {
				t.Fatalf("replica %d did not start:\n%s", i, stderr.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		host := strings.TrimPrefix(r.url, "http://")
		ip, port, _ := strings.Cut(host, ":")
		// The Deployment's pod label selects the "memvanta" engine config.
		r.ep = fwkdl.NewEndpoint(&fwkdl.EndpointMetadata{
			NamespacedName: types.NamespacedName{Namespace: "default", Name: r.name}, PodName: r.name,
			Address: ip, Port: port, MetricsHost: host,
			Labels: map[string]string{extractormetrics.DefaultEngineTypeLabelKey: "memvanta", "app": "tinyllama-memvanta"},
		}, fwkdl.NewMetrics())
		rs = append(rs, r)
	}
	return rs
}

// epp is GIE's endpoint picker as the configuration builds it.
type epp struct {
	sched    *scheduling.Scheduler
	sources  []sourceCfg
	prepare  []requestcontrol.PrepareDataPlugin
	pre      []requestcontrol.PreRequest
	replicas []*replica
}

type sourceCfg struct {
	src        fwkdl.PollingDataSource
	extractors []fwkdl.Extractor
}

func newPicker(t *testing.T, rs []*replica) *epp {
	t.Helper()
	registerPlugins()
	raw, _, err := loader.LoadRawConfig(eppConfig(t), logr.Discard())
	if err != nil {
		t.Fatalf("EndpointPickerConfig: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	handle := fwkplugin.NewEppHandle(ctx, func() []types.NamespacedName {
		var out []types.NamespacedName
		for _, r := range rs {
			out = append(out, r.ep.GetMetadata().NamespacedName)
		}
		return out
	})
	cfg, err := loader.InstantiateAndConfigure(raw, handle, logr.Discard())
	if err != nil {
		t.Fatalf("EndpointPickerConfig: %v", err)
	}
	p := &epp{sched: scheduling.NewSchedulerWithConfig(cfg.SchedulerConfig), replicas: rs}
	if cfg.DataConfig == nil || len(cfg.DataConfig.Sources) != 1 {
		t.Fatalf("want one metrics data source, got %+v", cfg.DataConfig)
	}
	for _, s := range cfg.DataConfig.Sources {
		ps, ok := s.Plugin.(fwkdl.PollingDataSource)
		if !ok {
			t.Fatalf("data source %T does not poll", s.Plugin)
		}
		p.sources = append(p.sources, sourceCfg{ps, s.Extractors})
	}
	for _, pl := range handle.GetAllPlugins() {
		if x, ok := pl.(requestcontrol.PrepareDataPlugin); ok {
			p.prepare = append(p.prepare, x)
		}
		if x, ok := pl.(requestcontrol.PreRequest); ok {
			p.pre = append(p.pre, x)
		}
	}
	if len(p.prepare) == 0 || len(p.pre) == 0 {
		t.Fatal("the prefix-cache scorer's data producer was not configured")
	}
	return p
}

// scrape refreshes every replica's metrics through GIE's data source and
// extractor; an error means a configured metric was not found.
func (p *epp) scrape(ctx context.Context) error {
	for _, r := range p.replicas {
		for _, s := range p.sources {
			data, err := s.src.Poll(ctx, r.ep)
			if err != nil {
				return fmt.Errorf("%s: %w", r.name, err)
			}
			for _, x := range s.extractors {
				if err := x.Extract(ctx, data, r.ep); err != nil {
					return fmt.Errorf("%s: %w", r.name, err)
				}
			}
		}
	}
	return nil
}

// pick runs one scheduling cycle as the EPP's director does: prepare data,
// schedule, then PreRequest (which records the prefix for later requests).
// It returns the replica and, per replica, the prefix blocks matched.
func (p *epp) pick(ctx context.Context, id, prompt string) (*replica, map[string]int, error) {
	req := &fwksched.LLMRequest{RequestId: id, TargetModel: "tiny",
		Body: &fwksched.LLMRequestBody{Completions: &fwksched.CompletionsRequest{Prompt: fwksched.Prompt{Raw: prompt}}}}
	eps := make([]fwksched.Endpoint, len(p.replicas))
	for i, r := range p.replicas {
		eps[i] = fwksched.NewEndpoint(r.ep.GetMetadata(), r.ep.GetMetrics(), r.ep.GetAttributes())
	}
	for _, x := range p.prepare {
		if err := x.PrepareRequestData(ctx, req, eps); err != nil {
			return nil, nil, err
		}
	}
	match := map[string]int{}
	for _, ep := range eps {
		if v, ok := ep.Get(attrprefix.PrefixCacheMatchInfoKey); ok {
			if mi, ok := v.(*attrprefix.PrefixCacheMatchInfo); ok {
				match[ep.GetMetadata().NamespacedName.Name] = mi.MatchBlocks()
			}
		}
	}
	res, err := p.sched.Schedule(ctx, req, eps)
	if err != nil {
		return nil, nil, err
	}
	for _, x := range p.pre {
		x.PreRequest(ctx, req, res)
	}
	target := res.ProfileResults[res.PrimaryProfileName].TargetEndpoints[0].GetMetadata().NamespacedName.Name
	for _, r := range p.replicas {
		if r.name == target {
			return r, match, nil
		}
	}
	return nil, nil, fmt.Errorf("scheduler picked unknown endpoint %s", target)
}

func complete(ctx context.Context, url, prompt string, maxTokens int) error {
	body := fmt.Sprintf(`{"model":"tiny","prompt":%q,"max_tokens":%d,"ignore_eos":true,"temperature":0}`, prompt, maxTokens)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/completions", strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s: %s", resp.Status, b)
	}
	return nil
}

// counter reads a memvanta counter from a replica's /metrics.
func counter(t *testing.T, url, name string) float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("%s: no %s", url, name)
	return 0
}

// waitMetrics polls the scrape until cond holds for replica r (a
// synchronisation with the replica's engine, not a timing assertion).
func waitMetrics(t *testing.T, p *epp, r *replica, what string, cond func(m *fwkdl.Metrics) bool) {
	t.Helper()
	for i := 0; ; i++ {
		if err := p.scrape(context.Background()); err != nil {
			t.Fatal(err)
		}
		if cond(r.ep.GetMetrics()) {
			return
		}
		if i > 3000 {
			t.Fatalf("%s: %s never seen; last %+v", r.name, what, r.ep.GetMetrics())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestEndpointPickerOverReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("builds memvanta and starts three replicas")
	}
	bin, model := buildMemvanta(t)
	rs := startReplicas(t, bin, model, 3)
	p := newPicker(t, rs)
	ctx := context.Background()

	// Idle: every configured metric is found (an absent one is an
	// extraction error) and reads zero.
	if err := p.scrape(ctx); err != nil {
		t.Fatalf("scrape: %v", err)
	}
	for _, r := range rs {
		m := r.ep.GetMetrics()
		if m.WaitingQueueSize != 0 || m.RunningRequestsSize != 0 || m.KVCacheUsagePercent != 0 || m.UpdateTime.IsZero() {
			t.Errorf("%s idle: %+v", r.name, m)
		}
	}

	// Load: five long requests on one replica (two slots: two run, three
	// wait). GIE reads the queue, the running requests and the KV use, and
	// sends no new request there.
	for i, busy := range rs {
		lctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for j := 0; j < 5; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = complete(lctx, busy.url, fmt.Sprintf("long request %d %d", i, j), 60000)
			}()
		}
		waitMetrics(t, p, busy, "2 running, 3 waiting, KV in use", func(m *fwkdl.Metrics) bool {
			return m.RunningRequestsSize == 2 && m.WaitingQueueSize == 3 && m.KVCacheUsagePercent > 0
		})
		for _, r := range rs {
			if r != busy {
				if m := r.ep.GetMetrics(); m.RunningRequestsSize != 0 || m.WaitingQueueSize != 0 {
					t.Errorf("%s should be idle: %+v", r.name, m)
				}
			}
		}
		for k := 0; k < 20; k++ {
			prompt := fmt.Sprintf("fresh prompt %d for round %d with nothing cached anywhere", k, i)
			r, _, err := p.pick(ctx, fmt.Sprintf("load-%d-%d", i, k), prompt)
			if err != nil {
				t.Fatal(err)
			}
			if r == busy {
				t.Errorf("round %d: picked the loaded replica %s (%+v)", i, r.name, r.ep.GetMetrics())
			}
			if err := complete(ctx, r.url, prompt, 2); err != nil {
				t.Fatal(err)
			}
		}
		cancel()
		wg.Wait()
		waitMetrics(t, p, busy, "idle again", func(m *fwkdl.Metrics) bool {
			return m.RunningRequestsSize == 0 && m.WaitingQueueSize == 0 && m.KVCacheUsagePercent == 0
		})
	}

	// Prefix affinity: 240 requests in 4 groups sharing a long prefix,
	// six in flight at once. GIE should keep each group where its prefix
	// was sent before (the replicas' prefix reuse confirms it), unless
	// load pulls it away, and spread the groups over the replicas.
	cachedBefore, promptBefore := 0.0, 0.0
	for _, r := range rs {
		cachedBefore += counter(t, r.url, "memvanta:prompt_tokens_cached_total")
		promptBefore += counter(t, r.url, "memvanta:prompt_tokens_total")
	}
	prefixes := make([]string, 4)
	for g := range prefixes {
		prefixes[g] = strings.Repeat(fmt.Sprintf("system prompt of group %d: answer briefly and politely. ", g), 8)
	}
	const total = 240
	sem := make(chan struct{}, 6)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	used := map[string]int{}
	seenGroup := map[int]bool{}
	matched, withHistory := 0, 0
	for i := 0; i < total; i++ {
		g := i % 4
		prompt := prefixes[g] + fmt.Sprintf("question %d?", i)
		if err := p.scrape(ctx); err != nil {
			t.Fatal(err)
		}
		r, match, err := p.pick(ctx, fmt.Sprintf("prefix-%d", i), prompt)
		if err != nil {
			t.Fatal(err)
		}
		best := 0
		for _, v := range match {
			best = max(best, v)
		}
		if seenGroup[g] {
			withHistory++
			if best > 0 && match[r.name] == best {
				matched++
			}
		}
		seenGroup[g] = true
		used[r.name]++
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := complete(ctx, r.url, prompt, 4); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d requests failed, first: %v", len(errs), errs[0])
	}
	cached, prompt := -cachedBefore, -promptBefore
	for _, r := range rs {
		cached += counter(t, r.url, "memvanta:prompt_tokens_cached_total")
		prompt += counter(t, r.url, "memvanta:prompt_tokens_total")
	}
	t.Logf("picks per replica %v; %d of %d requests with history went to a replica holding their prefix; replicas reused %.0f prompt tokens and computed %.0f",
		used, matched, withHistory, cached, prompt)
	if len(used) != 3 {
		t.Errorf("load not spread: picks %v", used)
	}
	if float64(matched) < 0.7*float64(withHistory) {
		t.Errorf("prefix affinity: only %d of %d requests went to a replica with their prefix", matched, withHistory)
	}
	if cached < 0.5*(cached+prompt) {
		t.Errorf("replicas reused %.0f prompt tokens and computed %.0f: prefix affinity did not reach the caches", cached, prompt)
	}
}

func manifestDocs(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var docs [][]byte
	for _, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
		if strings.TrimSpace(d) != "" {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}
