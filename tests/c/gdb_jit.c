/* A JIT that tells only gdb about its code, through gdb's JIT interface,
 * with both interface symbols local: it loads the .text of an object file
 * (argv[1], from gdb_jit_code.c) into fresh memory, points the object's
 * .text section address at it (as LLVM does), registers the object and
 * calls its functions. Along the way: an unregistration, a load at the
 * freed address, an object whose symbol lies about its size, an entry
 * whose object lies about its size, a non-ELF object, and loads from two
 * threads. triangle(1000) runs 13 times in all, as in gdb_jit_native.c;
 * peek reads memory never written, once (memcheck's one error). */
#include <elf.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct jit_code_entry {
    struct jit_code_entry *next_entry;
    struct jit_code_entry *prev_entry;
    const char *symfile_addr;
    uint64_t symfile_size;
};

struct jit_descriptor {
    uint32_t version;
    uint32_t action_flag;
    struct jit_code_entry *relevant_entry;
    struct jit_code_entry *first_entry;
};

static struct jit_descriptor __jit_debug_descriptor __attribute__((used)) = {1, 0, 0, 0};

static void __attribute__((noinline, used)) __jit_debug_register_code(void) {
    __asm__ volatile("" ::: "memory");
}

static pthread_mutex_t jit_lock = PTHREAD_MUTEX_INITIALIZER;
static char *object;
static size_t object_size;

static void tell_gdb(struct jit_code_entry *entry, uint32_t action) {
    pthread_mutex_lock(&jit_lock);
    if (action == 1) {
        entry->prev_entry = NULL;
        entry->next_entry = __jit_debug_descriptor.first_entry;
        if (entry->next_entry)
            entry->next_entry->prev_entry = entry;
        __jit_debug_descriptor.first_entry = entry;
    } else {
        if (entry->prev_entry)
            entry->prev_entry->next_entry = entry->next_entry;
        else
            __jit_debug_descriptor.first_entry = entry->next_entry;
        if (entry->next_entry)
            entry->next_entry->prev_entry = entry->prev_entry;
    }
    __jit_debug_descriptor.relevant_entry = entry;
    __jit_debug_descriptor.action_flag = action;
    __jit_debug_register_code();
    pthread_mutex_unlock(&jit_lock);
}

static Elf64_Shdr *section(char *obj, const char *name) {
    Elf64_Ehdr *eh = (Elf64_Ehdr *)obj;
    Elf64_Shdr *sh = (Elf64_Shdr *)(obj + eh->e_shoff);
    const char *names = obj + sh[eh->e_shstrndx].sh_offset;
    for (int i = 0; i < eh->e_shnum; i++)
        if (strcmp(names + sh[i].sh_name, name) == 0)
            return &sh[i];
    fprintf(stderr, "no section %s\n", name);
    exit(1);
}

static Elf64_Sym *symbol(char *obj, const char *name) {
    Elf64_Shdr *symtab = section(obj, ".symtab");
    Elf64_Shdr *strtab = section(obj, ".strtab");
    Elf64_Sym *syms = (Elf64_Sym *)(obj + symtab->sh_offset);
    for (size_t i = 0; i < symtab->sh_size / sizeof *syms; i++)
        if (strcmp(obj + strtab->sh_offset + syms[i].st_name, name) == 0)
            return &syms[i];
    fprintf(stderr, "no symbol %s\n", name);
    exit(1);
}

struct loaded {
    struct jit_code_entry entry;
    char *symfile;
    char *code;
    size_t code_size;
    long (*triangle)(long);
    long (*peek)(const long *);
};

/* Copies .text to fresh pages (at `where`, if given) and registers it. */
static struct loaded *load(void *where, uint64_t lie_symbol_size) {
    struct loaded *l = calloc(1, sizeof *l);
    l->symfile = malloc(object_size);
    memcpy(l->symfile, object, object_size);
    Elf64_Shdr *text = section(l->symfile, ".text");
    l->code_size = (text->sh_size + 4095) & ~(size_t)4095;
    int fixed = where ? MAP_FIXED : 0;
    l->code = mmap(where, l->code_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | fixed, -1, 0);
    if (l->code == MAP_FAILED) { perror("mmap"); exit(1); }
    memcpy(l->code, l->symfile + text->sh_offset, text->sh_size);
    mprotect(l->code, l->code_size, PROT_READ | PROT_EXEC);
    text->sh_addr = (uint64_t)(uintptr_t)l->code;
    if (lie_symbol_size)
        symbol(l->symfile, "triangle")->st_size = lie_symbol_size;
    l->triangle = (long (*)(long))(l->code + symbol(l->symfile, "triangle")->st_value);
    l->peek = (long (*)(const long *))(l->code + symbol(l->symfile, "peek")->st_value);
    l->entry.symfile_addr = l->symfile;
    l->entry.symfile_size = object_size;
    tell_gdb(&l->entry, 1);
    return l;
}

static void unload(struct loaded *l) {
    tell_gdb(&l->entry, 2);
    munmap(l->code, l->code_size);
}

static long total;

static void *thread_main(void *unused) {
    (void)unused;
    struct loaded *l = load(NULL, 0);
    long t = l->triangle(1000) + l->triangle(1000);
    pthread_mutex_lock(&jit_lock);
    total += t;
    pthread_mutex_unlock(&jit_lock);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: gdb_jit OBJECT\n"); return 2; }
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 1; }
    fseek(f, 0, SEEK_END);
    object_size = (size_t)ftell(f);
    rewind(f);
    object = malloc(object_size);
    if (fread(object, 1, object_size, f) != object_size) { perror("fread"); return 1; }
    fclose(f);

    struct loaded *a = load(NULL, 0);
    for (int i = 0; i < 3; i++)
        total += a->triangle(1000);
    void *freed = a->code;
    unload(a);

    struct loaded *b = load(freed, 0); /* the same addresses, new code */
    for (int i = 0; i < 5; i++)
        total += b->triangle(1000);
    long *never_written = malloc(sizeof *never_written);
    volatile long sink = b->peek(never_written); /* one memcheck error */
    (void)sink;
    free(never_written);

    struct loaded *c = load(NULL, 1ull << 40); /* triangle's size is a lie */
    total += c->triangle(1000);

    static struct jit_code_entry not_elf = {0, 0, "not an object file", 18};
    tell_gdb(&not_elf, 1);
    static struct jit_code_entry too_long = {0};
    too_long.symfile_addr = c->symfile;
    too_long.symfile_size = 512u << 20; /* far past the copy's end */
    tell_gdb(&too_long, 1);

    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, thread_main, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("%ld\n", total);
    return 0;
}
