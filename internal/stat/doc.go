// Package stat is the statistics kvbench's comparisons need and gonum's
// stat package does not have: the Mann-Whitney U test (ranks with ties,
// the exact null distribution for small samples, the normal
// approximation with tie and continuity corrections), seeded bootstrap
// draws of a percentile in O(1) per resample, of a ratio of sums and of
// a proportion, and the summary of a handful of values (median, mean,
// standard deviation, a bootstrap interval of the median). Means,
// standard deviations and the normal and Beta laws are gonum's.
package stat
