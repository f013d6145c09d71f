//===- TidalEnums.td - operation kinds shared by rt and sdg --------------===//
#ifndef TIDAL_ENUMS_TD
#define TIDAL_ENUMS_TD

include "mlir/IR/EnumAttr.td"

def Tidal_UnaryKind : I32EnumAttr<"UnaryKind", "elementwise unary function", [
    I32EnumAttrCase<"neg", 0>, I32EnumAttrCase<"exp", 1>, I32EnumAttrCase<"log", 2>,
    I32EnumAttrCase<"tanh", 3>, I32EnumAttrCase<"sigmoid", 4>, I32EnumAttrCase<"relu", 5>,
    I32EnumAttrCase<"sqrt", 6>, I32EnumAttrCase<"rsqrt", 7>, I32EnumAttrCase<"abs", 8>,
    I32EnumAttrCase<"sign", 9>, I32EnumAttrCase<"sin", 10>, I32EnumAttrCase<"cos", 11>,
    I32EnumAttrCase<"floor", 12>, I32EnumAttrCase<"ceil", 13>, I32EnumAttrCase<"logical_not", 14, "not">,
    I32EnumAttrCase<"reciprocal", 15>, I32EnumAttrCase<"square", 16>]> {
  let cppNamespace = "::tidal";
}

def Tidal_BinaryKind : I32EnumAttr<"BinaryKind", "elementwise binary function", [
    I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"sub", 1>, I32EnumAttrCase<"mul", 2>,
    I32EnumAttrCase<"div", 3>, I32EnumAttrCase<"pow", 4>, I32EnumAttrCase<"max", 5>,
    I32EnumAttrCase<"min", 6>, I32EnumAttrCase<"mod", 7>, I32EnumAttrCase<"floordiv", 8>,
    I32EnumAttrCase<"eq", 9>, I32EnumAttrCase<"ne", 10>, I32EnumAttrCase<"lt", 11>,
    I32EnumAttrCase<"le", 12>, I32EnumAttrCase<"gt", 13>, I32EnumAttrCase<"ge", 14>,
    I32EnumAttrCase<"logical_and", 15, "and">, I32EnumAttrCase<"logical_or", 16, "or">, I32EnumAttrCase<"logical_xor", 17, "xor">]> {
  let cppNamespace = "::tidal";
}

def Tidal_ReduceKind : I32EnumAttr<"ReduceKind", "reduction", [
    I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"prod", 1>, I32EnumAttrCase<"max", 2>,
    I32EnumAttrCase<"min", 3>, I32EnumAttrCase<"any", 4>, I32EnumAttrCase<"all", 5>,
    I32EnumAttrCase<"argmax", 6>, I32EnumAttrCase<"argmin", 7>]> {
  let cppNamespace = "::tidal";
}

def Tidal_ScanKind : I32EnumAttr<"ScanKind", "inclusive scan", [
    I32EnumAttrCase<"cumsum", 0>, I32EnumAttrCase<"cumprod", 1>,
    I32EnumAttrCase<"cummax", 2>, I32EnumAttrCase<"cummin", 3>]> {
  let cppNamespace = "::tidal";
}

def Tidal_RandomDist : I32EnumAttr<"RandomDist", "random distribution", [
    I32EnumAttrCase<"uniform", 0>, I32EnumAttrCase<"normal", 1>,
    I32EnumAttrCase<"bernoulli", 2>]> {
  let cppNamespace = "::tidal";
}

#endif // TIDAL_ENUMS_TD
