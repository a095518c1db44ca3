// PLACEHOLDER benchmark.
int main() { return 0; }
