package serve

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memvanta/memvanta/core/engine"
)

// Metrics with a Router: every engine gauge and counter of single-model
// mode, one series per model that is loaded (or that requests wait for),
// labelled model_name as vLLM labels its series; the requests waiting for
// a model to load (or for memory) count in its num_requests_waiting. A
// scheduler that scrapes a several-model replica (the GIE endpoint picker)
// selects the series of the model it routes with a model_name label in its
// metric spec.

// Router-level metric names.
const (
	ModelMemoryBytes  = "memvanta:model_memory_bytes"
	ModelsBudgetBytes = "memvanta:models_memory_budget_bytes"
	ModelsUsedBytes   = "memvanta:models_memory_used_bytes"
	ModelLoadsTotal   = "memvanta:model_loads_total"
	ModelUnloadsTotal = "memvanta:model_unloads_total"
)

type routerCollector struct {
	r    *Router
	defs []engineMetric
}

var (
	memDesc     = prometheus.NewDesc(ModelMemoryBytes, "Memory a loaded model holds in the budget: weights and KV caches at full context.", []string{"model_name"}, nil)
	budgetDesc  = prometheus.NewDesc(ModelsBudgetBytes, "The memory budget of all loaded models (--mem-budget; 0 = none).", nil, nil)
	usedDesc    = prometheus.NewDesc(ModelsUsedBytes, "Memory reserved by loaded and loading models.", nil, nil)
	loadsDesc   = prometheus.NewDesc(ModelLoadsTotal, "Times the model was loaded.", []string{"model_name"}, nil)
	unloadsDesc = prometheus.NewDesc(ModelUnloadsTotal, "Times the model was unloaded (idle keep-alive, /models/unload, or to make room).", []string{"model_name"}, nil)
)

func (c *routerCollector) desc(d engineMetric) *prometheus.Desc {
	keys := make([]string, 0, len(d.labels))
	for k := range d.labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	labels := append([]string{"model_name"}, keys...)
	return prometheus.NewDesc(d.name, d.help, labels, nil)
}

// Describe sends nothing: the collector is unchecked, its series come and
// go with the models.
func (c *routerCollector) Describe(chan<- *prometheus.Desc) {}

func (c *routerCollector) Collect(ch chan<- prometheus.Metric) {
	budget, used := c.r.Memory()
	ch <- prometheus.MustNewConstMetric(budgetDesc, prometheus.GaugeValue, float64(budget))
	ch <- prometheus.MustNewConstMetric(usedDesc, prometheus.GaugeValue, float64(used))
	for _, m := range c.r.Status() {
		ch <- prometheus.MustNewConstMetric(loadsDesc, prometheus.CounterValue, float64(m.Loads), m.ID)
		ch <- prometheus.MustNewConstMetric(unloadsDesc, prometheus.CounterValue, float64(m.Unloads), m.ID)
	}
	descs := make([]*prometheus.Desc, len(c.defs))
	for i, d := range c.defs {
		descs[i] = c.desc(d)
	}
	for _, rs := range c.r.loadedBackends() {
		ch <- prometheus.MustNewConstMetric(memDesc, prometheus.GaugeValue, float64(rs.bytes), rs.id)
		var st engine.Stats
		if rs.be != nil {
			st = rs.be.Engine.Stats()
		}
		st.Waiting += rs.waiting
		for i, d := range c.defs {
			vt := prometheus.GaugeValue
			if d.counter {
				vt = prometheus.CounterValue
			}
			vals := []string{rs.id}
			keys := make([]string, 0, len(d.labels))
			for k := range d.labels {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				vals = append(vals, d.labels[k])
			}
			ch <- prometheus.MustNewConstMetric(descs[i], vt, d.f(&st), vals...)
		}
	}
}
