int f() {
	for (;;) {
		// perfhat: iterations=7
}
