// Checks recorded histories of versioned resources for linearizability (test/linearizability/checker.ts).
module svc-platform/linearizability-checker

go 1.25.0

require github.com/anishathalye/porcupine v1.3.1
