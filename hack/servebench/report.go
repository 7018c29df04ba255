package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// row is one line of the table: a protocol, a kind of GET and a number
// of clients, with each server's trials.
type row struct {
	proto, mode           string
	clients               int
	ag, ng                []result
	loadBefore, loadAfter string
}

// The goals of issue 39.
const (
	goalWhole   = 1.0  // whole-file throughput, agentiso/nginx
	goalRange   = 0.95 // range throughput
	goalP99     = 1.5  // p99 of a range GET, agentiso/nginx, at most
	goalRSSMiB  = 64   // agentiso's peak RSS at 50 clients, under
	goalClients = 50
)

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// ratios are agentiso's throughput over nginx's, trial pair by pair.
func (r row) ratios() []float64 {
	var out []float64
	for i := range min(len(r.ag), len(r.ng)) {
		if n := r.ng[i].mibps(); n > 0 {
			out = append(out, r.ag[i].mibps()/n)
		}
	}
	return out
}

func cpus(rs []result) []float64 {
	var out []float64
	for _, r := range rs {
		out = append(out, r.cpuPerGiB())
	}
	return out
}

func clientCPUs(rs []result) []float64 {
	var out []float64
	for _, r := range rs {
		out = append(out, r.clientPerGiB())
	}
	return out
}

func throughputs(rs []result) []float64 {
	var out []float64
	for _, r := range rs {
		out = append(out, r.mibps())
	}
	return out
}

// pooled is every range GET's latency of the trials together.
func pooled(rs []result) []time.Duration {
	var out []time.Duration
	for _, r := range rs {
		out = append(out, r.lat...)
	}
	return out
}

func peak(rs []result) int64 {
	var m int64
	for _, r := range rs {
		m = max(m, r.peakRSS)
	}
	return m
}

func errs(rs []result) (int, error) {
	n := 0
	var first error
	for _, r := range rs {
		n += r.errs
		if first == nil {
			first = r.firstErr
		}
	}
	return n, first
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)) }

// verdict says which goals a row misses ("" for none).
func (r row) verdict() []string {
	var miss []string
	goal := goalWhole
	if r.mode == "range" {
		goal = goalRange
	}
	if m := median(r.ratios()); m < goal {
		// Truncated, not rounded: 0.9497 is below 0.95.
		miss = append(miss, fmt.Sprintf("throughput %.3fx < %.2fx", math.Floor(m*1000)/1000, goal))
	}
	if r.mode == "range" {
		a, n := percentile(pooled(r.ag), 0.99), percentile(pooled(r.ng), 0.99)
		if n > 0 && float64(a) > goalP99*float64(n) {
			miss = append(miss, fmt.Sprintf("p99 %.2fx > %.1fx", float64(a)/float64(n), goalP99))
		}
	}
	if r.clients >= goalClients && peak(r.ag) >= goalRSSMiB<<20 {
		miss = append(miss, fmt.Sprintf("RSS %d MiB >= %d", peak(r.ag)>>20, goalRSSMiB))
	}
	if n, _ := errs(r.ag); n > 0 {
		miss = append(miss, fmt.Sprintf("%d agentiso errors", n))
	}
	if n, _ := errs(r.ng); n > 0 {
		miss = append(miss, fmt.Sprintf("%d nginx errors", n))
	}
	return miss
}

// render is the Markdown table of rows: medians of the trials, the ratio
// as the median of the pairs' ratios with their range.
func render(rows []row) string {
	var b strings.Builder
	b.WriteString("| protocol | GETs | clients | agentiso MiB/s | nginx MiB/s | agentiso/nginx (min-max) | p99 range GET ms, agentiso / nginx | CPU s/GiB, agentiso / nginx (client's with each) | agentiso peak RSS MiB | load before, after | goals |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | --- | --- | --- | ---: | --- | --- |\n")
	var ciphers []string
	var notes []string
	for _, r := range rows {
		rat := r.ratios()
		lo, hi := 0.0, 0.0
		if len(rat) > 0 {
			lo, hi = slices.Min(rat), slices.Max(rat)
		}
		p99 := "-"
		if r.mode == "range" {
			p99 = ms(percentile(pooled(r.ag), 0.99)) + " / " + ms(percentile(pooled(r.ng), 0.99))
		}
		mode := "whole file"
		if r.mode == "range" {
			mode = "1 MiB ranges"
		}
		v := "met"
		if miss := r.verdict(); len(miss) > 0 {
			v = "**missed**: " + strings.Join(miss, ", ")
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %.0f | %.0f | %.2fx (%.2f-%.2f) | %s | %.2f / %.2f (%.2f / %.2f) | %d | %s; %s | %s |\n",
			strings.ToUpper(r.proto), mode, r.clients, median(throughputs(r.ag)), median(throughputs(r.ng)),
			median(rat), lo, hi,
			p99, median(cpus(r.ag)), median(cpus(r.ng)), median(clientCPUs(r.ag)), median(clientCPUs(r.ng)), peak(r.ag)>>20, r.loadBefore, r.loadAfter, v)
		for _, side := range []struct {
			name string
			rs   []result
		}{{"agentiso", r.ag}, {"nginx", r.ng}} {
			if n, first := errs(side.rs); n > 0 {
				notes = append(notes, fmt.Sprintf("%s %s %s %d clients: %d errors, the first: %v", side.name, r.proto, r.mode, r.clients, n, first))
			}
			for _, t := range side.rs {
				if t.cipher != "" && !slices.Contains(ciphers, side.name+" "+t.cipher) {
					ciphers = append(ciphers, side.name+" "+t.cipher)
				}
			}
		}
	}
	if len(ciphers) > 0 {
		b.WriteString("\nTLS: " + strings.Join(ciphers, ", ") + "\n")
	}
	for _, n := range notes {
		b.WriteString("\n" + n + "\n")
	}
	return b.String()
}
