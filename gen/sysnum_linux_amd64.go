package gen

// sysRenameat2 is renameat2's system call number on linux/amd64.
const sysRenameat2 = 316
