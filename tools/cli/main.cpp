// PLACEHOLDER entry point of the vdnn command line.
int main() { return 0; }
