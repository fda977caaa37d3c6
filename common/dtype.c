/* dtype.c — element sizes and safetensors names. */
#include <string.h>

#include "weights/dtype.h"

static const struct {
	const char *name;
	size_t size;
	int is_float;
} dtype_table[WT_DTYPE_COUNT_] = {
    [WT_DTYPE_INVALID] = {"INVALID", 0, 0},
    [WT_F64] = {"F64", 8, 1},
    [WT_F32] = {"F32", 4, 1},
    [WT_F16] = {"F16", 2, 1},
    [WT_BF16] = {"BF16", 2, 1},
    [WT_F8_E4M3] = {"F8_E4M3", 1, 1},
    [WT_F8_E5M2] = {"F8_E5M2", 1, 1},
    [WT_I64] = {"I64", 8, 0},
    [WT_I32] = {"I32", 4, 0},
    [WT_I16] = {"I16", 2, 0},
    [WT_I8] = {"I8", 1, 0},
    [WT_U8] = {"U8", 1, 0},
    [WT_BOOL] = {"BOOL", 1, 0},
};

size_t wt_dtype_size(wt_dtype dt)
{
	if ((int)dt <= 0 || dt >= WT_DTYPE_COUNT_)
		return 0;
	return dtype_table[dt].size;
}

const char *wt_dtype_name(wt_dtype dt)
{
	if ((int)dt <= 0 || dt >= WT_DTYPE_COUNT_)
		return "INVALID";
	return dtype_table[dt].name;
}

wt_dtype wt_dtype_from_name(const char *name)
{
	if (name == NULL)
		return WT_DTYPE_INVALID;
	for (int i = 1; i < WT_DTYPE_COUNT_; i++)
		if (strcmp(dtype_table[i].name, name) == 0)
			return (wt_dtype)i;
	return WT_DTYPE_INVALID;
}

int wt_dtype_is_float(wt_dtype dt)
{
	if ((int)dt <= 0 || dt >= WT_DTYPE_COUNT_)
		return 0;
	return dtype_table[dt].is_float;
}
