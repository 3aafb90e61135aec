package gen

// sysRenameat2 is renameat2's system call number on linux/arm64.
const sysRenameat2 = 276
