// STUB main, replaced by the CLI.
int main() { return 0; }
