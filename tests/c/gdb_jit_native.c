/* The same calls as gdb_jit.c, to the same object linked in: what each
 * function costs when Valgrind knows it from the start. */
#include <stdio.h>

long triangle(long n);

int main(void) {
    long total = 0;
    for (int i = 0; i < 13; i++)
        total += triangle(1000);
    printf("%ld\n", total);
    return 0;
}
