package console

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"

	"github.com/switchyard-dev/switchyard/machines"
)

// Layout of the lane machine's diagram, in SVG user units.
const (
	nodeW, nodeH = 150, 40
	colGap       = 230
	rowGap       = 80
	margin       = 30
)

// MachineSVG draws the lane machine from machines.Transitions, the table
// the code runs: states in columns by their distance from created, one
// arrow per (from, to) pair labelled with its events. Each state is a
// <g class="state" data-state="NAME">, so the page highlights a lane's
// current state by adding a class; final states have the class "final",
// the cancel edges "cancel".
func MachineSVG() string {
	table := machines.Transitions()
	// Columns: breadth-first distance from created over the table's edges.
	col := map[machines.State]int{machines.StateCreated: 0}
	queue := []machines.State{machines.StateCreated}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, t := range table {
			if slices.Contains(t.From, s) {
				if _, seen := col[t.To]; !seen {
					col[t.To] = col[s] + 1
					queue = append(queue, t.To)
				}
			}
		}
	}
	type pos struct{ x, y float64 }
	at := map[machines.State]pos{}
	rows := map[int]int{}
	maxCol, maxRow := 0, 0
	for _, s := range machines.States { // lifecycle order within a column
		c, ok := col[s]
		if !ok {
			c = maxCol + 1 // unreachable states (none today) go last
		}
		at[s] = pos{float64(margin + c*colGap), float64(margin + rows[c]*rowGap)}
		rows[c]++
		maxCol, maxRow = max(maxCol, c), max(maxRow, rows[c])
	}
	width := margin*2 + maxCol*colGap + nodeW
	height := margin*2 + (maxRow-1)*rowGap + nodeH

	type pair struct{ from, to machines.State }
	labels := map[pair][]string{}
	var order []pair
	for _, t := range table {
		for _, f := range t.From {
			p := pair{f, t.To}
			if _, ok := labels[p]; !ok {
				order = append(order, p)
			}
			labels[p] = append(labels[p], string(t.Event))
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="machine" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="the lane state machine">`, width, height, width, height)
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker></defs>`)
	center := func(s machines.State) pos { p := at[s]; return pos{p.x + nodeW/2, p.y + nodeH/2} }
	for _, p := range order {
		a, z := center(p.from), center(p.to)
		// Leave and enter at the boxes' edges along the line between
		// centres, and bow the line so a pair's two directions part.
		dx, dy := z.x-a.x, z.y-a.y
		n := math.Hypot(dx, dy)
		ux, uy := dx/n, dy/n
		clip := func(c pos, sx, sy float64) pos {
			tx, ty := math.Inf(1), math.Inf(1)
			if sx != 0 {
				tx = (nodeW / 2) / math.Abs(sx)
			}
			if sy != 0 {
				ty = (nodeH / 2) / math.Abs(sy)
			}
			t := math.Min(tx, ty) + 2
			return pos{c.x + sx*t, c.y + sy*t}
		}
		s, e := clip(a, ux, uy), clip(z, -ux, -uy)
		bow := 24.0
		cx, cy := (s.x+e.x)/2-uy*bow, (s.y+e.y)/2+ux*bow
		cls := "edge"
		if p.to == machines.StateCancelled {
			cls += " cancel"
		}
		label := strings.Join(labels[p], ", ")
		fmt.Fprintf(&b, `<g class="%s" data-from="%s" data-to="%s"><path d="M%.1f,%.1f Q%.1f,%.1f %.1f,%.1f" marker-end="url(#arrow)"/><text x="%.1f" y="%.1f">%s</text></g>`,
			cls, p.from, p.to, s.x, s.y, cx, cy, e.x, e.y, (s.x+2*cx+e.x)/4, (s.y+2*cy+e.y)/4-3, html.EscapeString(label))
	}
	for _, s := range machines.States {
		p := at[s]
		cls := "state"
		if s.Final() {
			cls += " final"
		}
		fmt.Fprintf(&b, `<g class="%s" data-state="%s"><rect x="%.0f" y="%.0f" width="%d" height="%d" rx="8"/><text x="%.0f" y="%.0f">%s</text></g>`,
			cls, s, p.x, p.y, nodeW, nodeH, p.x+nodeW/2, p.y+nodeH/2+5, html.EscapeString(string(s)))
	}
	b.WriteString(`</svg>`)
	return b.String()
}
