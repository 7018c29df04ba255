package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Hub applies manifests to a Kubernetes API server the way `kubectl apply
// --server-side` does (discovery finds each kind's resource and scope; the
// server validates against the CRD schemas) and reads back what the
// controllers wrote.
type Hub struct {
	dc     dynamic.Interface
	mapper meta.ResettableRESTMapper
}

// NewHub returns a Hub for the API server of cfg.
func NewHub(cfg *rest.Config) (*Hub, error) {
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Hub{dc: dc, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))}, nil
}

// ReadManifests decodes every YAML document of the files, in order.
func ReadManifests(files ...string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
		for i := 0; ; i++ {
			var m map[string]any
			if err := d.Decode(&m); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return nil, fmt.Errorf("%s: document %d: %w", f, i, err)
			}
			if len(m) == 0 {
				continue
			}
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
	return out, nil
}

// Resource returns the client of obj's kind in obj's namespace (none for a
// cluster-scoped kind, whose metadata.namespace the server ignores, as
// kubectl does).
func (h *Hub) Resource(obj *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := obj.GroupVersionKind()
	m, err := h.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		h.mapper.Reset()
		if m, err = h.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			return nil, fmt.Errorf("%s %s: %w", gvk.Kind, obj.GetName(), err)
		}
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return h.dc.Resource(m.Resource).Namespace(obj.GetNamespace()), nil
	}
	return h.dc.Resource(m.Resource), nil
}

// Apply server-side-applies obj with field manager manager.
func (h *Hub) Apply(ctx context.Context, manager string, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	ri, err := h.Resource(obj)
	if err != nil {
		return nil, err
	}
	out, err := ri.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: manager, Force: true})
	if err != nil {
		return nil, fmt.Errorf("apply %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return out, nil
}

// Get reads the object of gvr named ns/name.
func (h *Hub) Get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	return h.dc.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
}

// Delete deletes the object of gvr named ns/name.
func (h *Hub) Delete(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) error {
	return h.dc.Resource(gvr).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{})
}

// UpdateStatus writes obj's status through the status subresource.
func (h *Hub) UpdateStatus(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return h.dc.Resource(gvr).Namespace(obj.GetNamespace()).UpdateStatus(ctx, obj, metav1.UpdateOptions{})
}

// Condition is one status.conditions entry.
type Condition struct {
	Type, Status, Reason, Message string
	// Since is when the condition's status last changed (its
	// lastTransitionTime), as the controller wrote it.
	Since time.Time
}

func (c Condition) String() string {
	return fmt.Sprintf("%s=%s (%s): %s", c.Type, c.Status, c.Reason, c.Message)
}

// Conditions returns status.conditions of obj by type.
func Conditions(obj *unstructured.Unstructured) map[string]Condition {
	out := map[string]Condition{}
	list, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range list {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		s := func(k string) string { v, _ := m[k].(string); return v }
		cond := Condition{Type: s("type"), Status: s("status"), Reason: s("reason"), Message: s("message")}
		if t, err := time.Parse(time.RFC3339, s("lastTransitionTime")); err == nil {
			cond.Since = t
		}
		out[cond.Type] = cond
	}
	return out
}

// FormatConditions lists conditions sorted by type, one a line.
func FormatConditions(conds map[string]Condition) string {
	var lines []string
	for _, c := range conds {
		lines = append(lines, "  "+c.String())
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// WaitFor polls get every interval until done reports true, and returns the
// last object read; on timeout the error carries what describe says of it.
func WaitFor(ctx context.Context, limit time.Duration, what string, get func(context.Context) (*unstructured.Unstructured, error),
	done func(*unstructured.Unstructured) bool, describe func(*unstructured.Unstructured) string) (*unstructured.Unstructured, error) {
	deadline := time.Now().Add(limit)
	var last *unstructured.Unstructured
	var lastErr error
	for {
		o, err := get(ctx)
		switch {
		case err == nil:
			last, lastErr = o, nil
			if done(o) {
				return o, nil
			}
		case apierrors.IsNotFound(err):
			lastErr = err
		default:
			return last, err
		}
		if time.Now().After(deadline) {
			if last == nil {
				return nil, fmt.Errorf("%s: not within %s: %v", what, limit, lastErr)
			}
			return last, fmt.Errorf("%s: not within %s; last seen:\n%s", what, limit, describe(last))
		}
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// ManifestFiles lists dir's *.yaml files, sorted (as kubectl apply -f dir).
func ManifestFiles(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	sort.Strings(files)
	return files, err
}
