// The strict exposition parser the metrics tests read /metrics with: it must
// refuse what a Prometheus scraper refuses, or those tests prove nothing.
import t from 'tap'
import { parsePrometheusText, total } from '../../helpers/prometheus-text'

const GOOD = `# HELP x_total Things.
# TYPE x_total counter
x_total{a="1",b="q\\"uote"} 3
x_total{a="2"} 4
# TYPE h histogram
h_bucket{le="0.1"} 1
h_bucket{le="+Inf"} 2
h_sum 0.3
h_count 2
`

t.test('a well-formed exposition parses, with escapes and histograms', async (t) => {
  const f = parsePrometheusText(GOOD)
  t.equal(total(f, 'x_total'), 7)
  t.equal(total(f, 'x_total', { b: 'q"uote' }), 3)
  t.equal(total(f, 'h_count'), 2)
})

t.test('faults a scraper refuses are refused', async (t) => {
  const bad: [string, string][] = [
    ['x 1\n', 'no declared family'],
    ['# TYPE x gauge\nx{a=1} 1\n', 'unquoted'],
    ['# TYPE x gauge\nx 1\nx 2\n', 'twice'],
    ['# TYPE x gauge\nx one\n', 'bad value'],
    ['# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_count 3\n', '!= _count'],
    ['# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_count 1\n', 'cumulative'],
    ['# TYPE x gauge\nx 1', 'newline'],
  ]
  for (const [text, why] of bad) t.throws(() => parsePrometheusText(text), { message: new RegExp(why.replace(/[+]/g, '\\+')) }, why)
})
