package gietest

import (
	"strings"
	"testing"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	giev1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	"sigs.k8s.io/gateway-api-inference-extension/pkg/epp/config/loader"
	extractormetrics "sigs.k8s.io/gateway-api-inference-extension/pkg/epp/framework/plugins/datalayer/extractor/metrics"
)

// yamlUnmarshal decodes one YAML document, refusing fields the Go type
// does not have (a misspelt field would be dropped by the API server).
func yamlUnmarshal(doc []byte, v any) error {
	return yaml.UnmarshalStrict(doc, v)
}

func kindOf(t *testing.T, doc []byte) string {
	t.Helper()
	var tm struct {
		Kind string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		t.Fatal(err)
	}
	return tm.Kind
}

// TestManifests parses deploy/k8s's manifests into the upstream API types
// (Kubernetes, GIE) with unknown fields rejected (KServe's manifest is
// deploy/kservetest's, a module of its own: KServe's API package links its
// storage clients), and checks that
// they agree with each other and with memvanta serve: one port (8000),
// readiness on /health, the pool selecting the Deployment's pods, the pod
// label choosing the endpoint picker's memvanta metric names.
func TestManifests(t *testing.T) {
	var dep *appsv1.Deployment
	var svc *corev1.Service
	for _, doc := range manifestDocs(t, "../k8s/memvanta.yaml") {
		switch k := kindOf(t, doc); k {
		case "Deployment":
			dep = new(appsv1.Deployment)
			if err := yamlUnmarshal(doc, dep); err != nil {
				t.Fatalf("Deployment: %v", err)
			}
		case "Service":
			svc = new(corev1.Service)
			if err := yamlUnmarshal(doc, svc); err != nil {
				t.Fatalf("Service: %v", err)
			}
		default:
			t.Fatalf("memvanta.yaml: unexpected kind %q", k)
		}
	}
	var pool *giev1.InferencePool
	var cm *corev1.ConfigMap
	for _, doc := range manifestDocs(t, "../k8s/inferencepool.yaml") {
		switch k := kindOf(t, doc); k {
		case "InferencePool":
			pool = new(giev1.InferencePool)
			if err := yamlUnmarshal(doc, pool); err != nil {
				t.Fatalf("InferencePool: %v", err)
			}
		case "ConfigMap":
			cm = new(corev1.ConfigMap)
			if err := yamlUnmarshal(doc, cm); err != nil {
				t.Fatalf("ConfigMap: %v", err)
			}
		default:
			t.Fatalf("inferencepool.yaml: unexpected kind %q", k)
		}
	}
	if dep == nil || svc == nil || pool == nil || cm == nil {
		t.Fatal("missing a Deployment, Service, InferencePool or ConfigMap")
	}
	// GIE's loader decodes strictly too.
	if _, _, err := loader.LoadRawConfig([]byte(cm.Data["memvanta-plugins.yaml"]), logr.Discard()); err != nil {
		t.Fatalf("EndpointPickerConfig: %v", err)
	}
	if !strings.Contains(cm.Data["memvanta-plugins.yaml"], "name: memvanta") {
		t.Error("the EndpointPickerConfig registers no memvanta engine")
	}

	pod := dep.Spec.Template
	if pod.Labels[extractormetrics.DefaultEngineTypeLabelKey] != "memvanta" {
		t.Errorf("pods lack %s: memvanta", extractormetrics.DefaultEngineTypeLabelKey)
	}
	for k, v := range pool.Spec.Selector.MatchLabels {
		if pod.Labels[string(k)] != string(v) {
			t.Errorf("InferencePool selects %s=%s, pods have %q", k, v, pod.Labels[string(k)])
		}
	}
	c := pod.Spec.Containers[0]
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 8000 || len(pool.Spec.TargetPorts) != 1 || pool.Spec.TargetPorts[0].Number != 8000 {
		t.Errorf("ports: container %v, pool %v; want 8000", c.Ports, pool.Spec.TargetPorts)
	}
	if !strings.Contains(strings.Join(c.Args, " "), "--port 8000") {
		t.Errorf("serve args %v do not listen on 8000", c.Args)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/health" {
		t.Errorf("readiness probe %+v, want GET /health", c.ReadinessProbe)
	}
	if svc.Spec.Selector["app"] != pod.Labels["app"] || svc.Spec.Ports[0].Port != 8000 {
		t.Errorf("Service %+v does not front the pods on 8000", svc.Spec)
	}
}

// A field the types do not know is refused: the check above can fail.
func TestManifestsRejectUnknownFields(t *testing.T) {
	bad := []byte("apiVersion: inference.networking.k8s.io/v1\nkind: InferencePool\nmetadata: {name: x}\nspec:\n  targetPortNumber: 8000\n")
	if err := yamlUnmarshal(bad, new(giev1.InferencePool)); err == nil {
		t.Error("the v1alpha2 field targetPortNumber was accepted by the v1 InferencePool")
	}
	badCfg := []byte("apiVersion: inference.networking.x-k8s.io/v1alpha1\nkind: EndpointPickerConfig\nplugins: []\nschedulingProfiles: []\nscorers: []\n")
	if _, _, err := loader.LoadRawConfig(badCfg, logr.Discard()); err == nil {
		t.Error("an unknown EndpointPickerConfig field was accepted")
	}
}
