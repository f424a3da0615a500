import Testing

/// The tests that run real hexd and hexctl processes, one suite at a time: several daemons per
/// test on a two-core machine are load enough, and their timing bounds assume a machine that is
/// not running every other daemon test at once.
@Suite(.serialized, .timeLimit(.minutes(10))) enum ProcessTests {}
