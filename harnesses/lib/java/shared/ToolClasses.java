package reactconformance.shared;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import javax.lang.model.SourceVersion;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

import reactconformance.Protocol;

/**
 * The suite's tools in a JVM library's documented primary form: a class of annotated methods, one
 * per tool, each parameter a Java parameter with its own annotated description (named by javac's
 * -parameters, as LangChain4j and Spring AI read them). The suite's tools are known only at
 * `build`, so the class is written then and compiled with the JDK's compiler; the library's own
 * annotations are given by an {@link Annotations}.
 */
public final class ToolClasses {
    /** What each generated method calls: the suite's tool, by name, with its args by name. */
    public interface Bridge {
        Object call(String tool, Map<String, Object> args);
    }

    /** How the library declares a tool method and its parameters, as Java source. */
    public interface Annotations {
        /** The library's name, for errors. */
        String library();

        /** The import lines the annotations need. */
        String imports();

        /** The annotation of a tool's method ({@code name} and {@code description} as Java string literals). */
        String tool(String name, String description);

        /** The annotation of a tool's parameter ({@code description} as a Java string literal). */
        String parameter(String description);

        /** The Java type of a parameter of the suite's type {@code suiteType}, whose usual Java type is
         *  {@code usual} (a library that reads some types its own way says so here). */
        default String parameterType(String suiteType, String usual) {
            return usual;
        }

        /** The tool method's return type, and the statement returning {@code result} (an Object, the
         *  suite tool's result) as that type. */
        default String returnType() {
            return "Object";
        }

        /** See {@link #returnType}. */
        default String returned(String result) {
            return "return " + result + ";";
        }

        /** Whether the tool methods are static (the library's documented form takes a class's static
         *  methods): the class's bridge is then a static field, set once the class is loaded, as each
         *  class is written for one agent. */
        default boolean staticMethods() {
            return false;
        }
    }

    private static final Map<String, String> JAVA_TYPE = Map.of("str", "String", "int", "long",
            "float", "double", "bool", "boolean", "list", "java.util.List<Object>",
            "dict", "java.util.Map<String, Object>");
    private static final AtomicInteger NEXT = new AtomicInteger();

    private ToolClasses() {}

    /** An instance of a new class of tool methods for {@code tools}, each calling {@code bridge}. */
    public static Object instance(List<Object> tools, Bridge bridge, Annotations annotations) throws Exception {
        String name = "Tools" + NEXT.incrementAndGet();
        String modifier = annotations.staticMethods() ? "static " : "";
        StringBuilder source = new StringBuilder("package reactconformance.generated;\n\n"
                + annotations.imports() + "\n"
                + "public final class " + name + " {\n"
                + "    private " + modifier + "reactconformance.shared.ToolClasses.Bridge bridge;\n\n"
                + "    public " + name + "(reactconformance.shared.ToolClasses.Bridge bridge) { "
                + (modifier.isEmpty() ? "this" : name) + ".bridge = bridge; }\n");
        int index = 0;
        for (Object t : tools) {
            Map<String, Object> tool = Protocol.asObject(t);
            List<String> params = new ArrayList<>();
            List<String> args = new ArrayList<>();
            for (Object p : Protocol.asList(tool.get("parameters"))) {
                Map<String, Object> param = Protocol.asObject(p);
                String paramName = Protocol.asString(param.get("name"));
                if (!SourceVersion.isName(paramName)) {
                    throw new IllegalArgumentException(annotations.library() + " names a tool method's parameters by "
                            + "their Java names: " + paramName + " is not a Java name");
                }
                String suiteType = Protocol.asString(param.get("type"));
                String type = annotations.parameterType(suiteType, JAVA_TYPE.get(suiteType));
                params.add(annotations.parameter(Protocol.stringify(Protocol.asString(param.get("description")))) + " "
                        + type + " " + paramName);
                args.add(Protocol.stringify(paramName) + ", " + paramName);
            }
            source.append("\n    ").append(annotations.tool(Protocol.stringify(Protocol.asString(tool.get("name"))),
                    Protocol.stringify(Protocol.asString(tool.get("description")))))
                    .append("\n    public ").append(modifier).append(annotations.returnType()).append(" tool")
                    .append(index++).append('(').append(String.join(", ", params))
                    .append(") {\n        java.util.Map<String, Object> args = new java.util.LinkedHashMap<>();\n");
            for (String arg : args) {
                source.append("        args.put(").append(arg).append(");\n");
            }
            source.append("        ").append(annotations.returned("bridge.call("
                    + Protocol.stringify(Protocol.asString(tool.get("name"))) + ", args)")).append("\n    }\n");
        }
        source.append("}\n");
        Path folder = Files.createTempDirectory("harness-tools");
        Path file = folder.resolve("reactconformance").resolve("generated").resolve(name + ".java");
        Files.createDirectories(file.getParent());
        Files.writeString(file, source, StandardCharsets.UTF_8);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        java.io.ByteArrayOutputStream errors = new java.io.ByteArrayOutputStream();
        int status = javac.run(null, errors, errors, "-parameters", "-proc:none", "-cp",
                System.getProperty("java.class.path"), "-d", folder.toString(), file.toString());
        if (status != 0) {
            throw new IOException("the tool class did not compile: " + errors.toString(StandardCharsets.UTF_8)
                    + "\n" + source);
        }
        @SuppressWarnings("resource") // kept open: the class lives as long as the agent
        URLClassLoader loader = new URLClassLoader(new URL[] {folder.toUri().toURL()}, ToolClasses.class.getClassLoader());
        Object instance = loader.loadClass("reactconformance.generated." + name).getConstructor(Bridge.class).newInstance(bridge);
        // The class is defined now (it has no nested classes to load later): its files can go.
        try (java.util.stream.Stream<Path> files = Files.walk(folder)) {
            for (Path path : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
        return instance;
    }
}
