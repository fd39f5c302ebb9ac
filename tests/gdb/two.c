/* Two functions for the preload's object reader: gcc -g -O1 -c. */
int square(int x)
{
    int y = x * x;
    return y + 1;
}

int sum_to(int n)
{
    int s = 0;
    for (int i = 1; i <= n; i++)
        s += square(i);
    return s;
}

/* A data symbol: no function. */
int counter = 3;
