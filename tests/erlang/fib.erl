%% fib(22): 57,313 calls of fib/1 under BEAM's JIT (tests/it/record.rs).
-module(fib).
-export([main/0, fib/1]).
fib(N) when N < 2 -> N;
fib(N) -> fib(N - 1) + fib(N - 2).
main() -> io:format("~p~n", [fib(22)]).
