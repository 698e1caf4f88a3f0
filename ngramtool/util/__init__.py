"""The leaves: what can go wrong, counts in words, numbers as users type them, the version,
primes, atomic outputs, signals, progress callbacks, CPU time per stage, write-behind, the numba
helpers and the chunk of tokens every stage passes on. They import nothing else of ngramtool."""
