// Compiles and runs N distinct functions (default 100,000), each called
// often enough for V8 to compile it: with --perf-basic-prof, a perf map
// as large services write, in V8's own order (several code spaces, code
// moved and its addresses used again). scripts/bench-symbols.sh runs it.
const n = +process.argv[2] || 100000;
let total = 0;
for (let i = 0; i < n; i++) {
  const f = new Function('x', `let s = ${i}; for (let k = 0; k < x; k++) s += k ^ ${i}; return s;`);
  for (let r = 0; r < 3; r++) total += f(50);
}
console.log(total);
