package results

// WrapArgs is wrapArgs, for the tests.
var WrapArgs = wrapArgs
