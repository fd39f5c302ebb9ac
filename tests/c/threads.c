/* Four threads register 200 functions each (for helgrind). */
#include <pthread.h>
#include "callgrind_jit.h"
#include "common.h"

static void *worker(void *arg) {
    char name[32];
    void *f = make_function((int)(intptr_t)arg);
    for (int i = 0; i < 200; i++) {
        snprintf(name, sizeof name, "t%d_fn_%d", (int)(intptr_t)arg, i);
        cgjit_code_loaded(f, 6, name, NULL, 0);
    }
    return NULL;
}

int main(void) {
    pthread_t t[4];
    cgjit_open();
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    return cgjit_close();
}
