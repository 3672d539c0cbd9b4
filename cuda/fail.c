/* fail.c: cr_fail (fail.h). */
#include "fail.h"

#include <stdarg.h>
#include <stdio.h>

cr_status
cr_fail(cr_error *error, cr_status status, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    error->cuda_code = 0;
    vsnprintf(error->message, sizeof(error->message), format, args);
    va_end(args);
    return status;
}
