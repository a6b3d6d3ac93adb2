// tinytrace command-line front end (being written).
int main() { return 0; }
