#include <cstdio>
int main() { std::puts("pipelab-cli: under construction"); return 0; }
