package rendezvous

import (
	"reflect"

	"github.com/seed-a052040e/agentiso/internal/termsafe"
)

// Sanitize makes one string from the API safe to print (termsafe.String).
func Sanitize(s string) string { return termsafe.String(s) }

// sanitizeDecoded replaces, in place, every string reachable from v (a
// pointer to what an API answer was decoded into) by its termsafe form.
// It runs on every answer as it is decoded, so no event message, host name,
// status or validation text can put a control character on the user's
// terminal, wherever it is printed later.
func sanitizeDecoded(v any) {
	sanitizeValue(reflect.ValueOf(v))
}

func sanitizeValue(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			sanitizeValue(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				sanitizeValue(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return // raw bytes (json.RawMessage) are never printed as text
		}
		for i := range v.Len() {
			sanitizeValue(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		iter := v.MapRange()
		type kv struct{ k, v reflect.Value }
		var repl []kv
		for iter.Next() {
			nv := reflect.New(v.Type().Elem()).Elem()
			nv.Set(iter.Value())
			sanitizeValue(nv)
			repl = append(repl, kv{iter.Key(), nv})
		}
		for _, e := range repl {
			v.SetMapIndex(e.k, e.v)
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(termsafe.String(v.String()))
		}
	}
}
