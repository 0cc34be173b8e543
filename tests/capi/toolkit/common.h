// Helpers shared by the toolkit test programs (the samples' INFO_LOG / ERROR_LOG style).
#ifndef ACL_LAB_TOOLKIT_COMMON_H_
#define ACL_LAB_TOOLKIT_COMMON_H_

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#define INFO_LOG(fmt, ...) fprintf(stderr, "[INFO]  " fmt "\n", ##__VA_ARGS__)
#define ERROR_LOG(fmt, ...) fprintf(stderr, "[ERROR] " fmt "\n", ##__VA_ARGS__)
#define CHECK(call)                                                        \
    do {                                                                   \
        aclError check_ret_ = (call);                                      \
        if (check_ret_ != ACL_SUCCESS) {                                   \
            ERROR_LOG("%s failed, errorCode = %d", #call, check_ret_);     \
            return 1;                                                      \
        }                                                                  \
    } while (0)

inline std::vector<char> ReadFile(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    return std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline bool WriteFile(const std::string &path, const void *data, size_t size)
{
    std::ofstream out(path, std::ios::binary);
    out.write(static_cast<const char *>(data), size);
    return out.good();
}

#endif
