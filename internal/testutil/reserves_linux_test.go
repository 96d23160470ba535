package testutil

// reserves: ClosedAddr keeps its port bound on this system.
const reserves = true
