// Package kservetest validates deploy/kserve's LLMInferenceService against
// KServe's own Go types. It is a module of its own, apart from
// deploy/gietest: KServe's API package links its storage clients (S3,
// Azure, GCS), which multiply the build, and pins its own version of the
// Gateway API Inference Extension.
package kservetest

import (
	"os"
	"regexp"
	"strings"
	"testing"

	kservev1alpha1 "github.com/kserve/kserve/pkg/apis/serving/v1alpha1"
	"sigs.k8s.io/yaml"
)

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

// yamlUnmarshal decodes one YAML document, refusing fields the Go type
// does not have (a misspelt field would be dropped by the API server).
func yamlUnmarshal(doc []byte, v any) error {
	return yaml.UnmarshalStrict(doc, v)
}

// TestLLMInferenceService parses the manifest into KServe's type with
// unknown fields rejected, and checks memvanta serves where KServe looks:
// the main container on port 8000, readiness on /health.
func TestLLMInferenceService(t *testing.T) {
	docs := manifestDocs(t, "../kserve/llminferenceservice.yaml")
	if len(docs) != 1 {
		t.Fatalf("llminferenceservice.yaml: %d documents", len(docs))
	}
	var llm kservev1alpha1.LLMInferenceService
	if err := yamlUnmarshal(docs[0], &llm); err != nil {
		t.Fatalf("LLMInferenceService: %v", err)
	}
	if llm.Kind != "LLMInferenceService" || llm.APIVersion != "serving.kserve.io/v1alpha1" {
		t.Errorf("kind %s/%s", llm.APIVersion, llm.Kind)
	}
	if llm.Spec.Template == nil || len(llm.Spec.Template.Containers) != 1 {
		t.Fatal("LLMInferenceService has no main container")
	}
	kc := llm.Spec.Template.Containers[0]
	if kc.Name != "main" || len(kc.Ports) != 1 || kc.Ports[0].ContainerPort != 8000 || !strings.Contains(strings.Join(kc.Args, " "), "--port 8000") {
		t.Errorf("KServe's main container must serve on 8000: %+v", kc)
	}
	if kc.ReadinessProbe == nil || kc.ReadinessProbe.HTTPGet == nil || kc.ReadinessProbe.HTTPGet.Path != "/health" || kc.ReadinessProbe.HTTPGet.Port.IntValue() != 8000 {
		t.Errorf("KServe readiness %+v, want GET :8000/health", kc.ReadinessProbe)
	}
}

// A field KServe's type does not have is refused.
func TestUnknownFieldRefused(t *testing.T) {
	bad := []byte("apiVersion: serving.kserve.io/v1alpha1\nkind: LLMInferenceService\nmetadata: {name: x}\nspec:\n  model: {uri: pvc://m/x}\n  port: 8000\n")
	if err := yamlUnmarshal(bad, new(kservev1alpha1.LLMInferenceService)); err == nil {
		t.Error("spec.port was accepted")
	}
}
