package jsonbound

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestContainers(t *testing.T) {
	for in, want := range map[string]int{
		`[{"message":"a \"{[\\"},{}]`: 3,
		`{"a":[[],[{}]],"b":"[[[["}`:  5,
		`"\\\\"`:                      0,
		`{`:                           1,
		``:                            0,
	} {
		assert.Equal(t, want, Containers([]byte(in), math.MaxInt), "%s", in)
	}
	assert.Equal(t, 3, Containers([]byte(`[[[[[[`), 2), "stops once past the bound")
}

// Containers counts exactly the objects and arrays of a valid document,
// whatever its strings hold.
func FuzzContainers(f *testing.F) {
	f.Add(`[{"message":"a \"{[\\"},{}]`)
	f.Add(`{"a":[[],[{}]],"b":"[[[["}`)
	f.Add(`"\\\\"`)
	f.Add(`{`)
	f.Fuzz(func(t *testing.T, s string) {
		n := Containers([]byte(s), math.MaxInt) // must not panic on any input
		if !json.Valid([]byte(s)) {
			return
		}
		d := json.NewDecoder(strings.NewReader(s))
		want := 0
		for {
			tok, err := d.Token()
			if err != nil {
				break
			}
			if tok == json.Delim('{') || tok == json.Delim('[') {
				want++
			}
		}
		assert.Equal(t, want, n)
		if want > 0 {
			assert.Equal(t, want, Containers([]byte(s), want-1), "the count stops one past the bound")
		}
	})
}
